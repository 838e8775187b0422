import assert from "node:assert/strict";
import { Agent, request } from "node:http";
import { after, before, describe, it } from "node:test";
import type { ConnectorAccount } from "../../src/connector.ts";
import { mattermostConnector } from "../../../functions/channels/mattermost/companion/connector.ts";
import { PrivateNetworkError, publicOnlyLookup } from "../../src/private-network.ts";
import {
  startFakeMattermost,
  type FakeMattermost,
} from "../../../functions/channels/mattermost/simulate/mattermost-api.ts";
import { MemoryContext, until } from "./memory-context.ts";

/**
 * The private-network guard (OpenClaw's `network.dangerouslyAllowPrivateNetwork`, default off): a
 * Mattermost server on a loopback, private, link-local or internal address is refused before any
 * request, and a name is judged by every address it resolves to at the connect itself.
 */

const fast = {
  backoff: { initialMs: 200, maxMs: 400, stableMs: 60_000 },
  pingIntervalMs: 100,
  pongTimeoutMs: 1_000,
  helloTimeoutMs: 2_000,
};

describe("Mattermost connector: private-network guard", () => {
  let fake: FakeMattermost;
  before(async () => (fake = await startFakeMattermost()));
  after(async () => fake.stop());

  const calls = async () =>
    (await (await fetch(`${fake.url}/_control/calls?path=/`)).json()) as unknown[];
  const sockets = async () =>
    ((await (await fetch(`${fake.url}/_control/sockets`)).json()) as { open: number }).open;
  const account = (baseUrl: string, settings: Record<string, unknown> = {}): ConnectorAccount => ({
    channel: "mattermost",
    accountId: "default",
    label: "Mattermost",
    settings: { baseUrl, ...settings },
    secretEnv: { botToken: "MATTERMOST_BOT_TOKEN" },
  });

  it("by default refuses 127.0.0.1, 10.x, [::1], 169.254.x and localhost with a clear error, and makes no request", async () => {
    const port = new URL(fake.url).port;
    const before = (await calls()).length;
    for (const baseUrl of [
      fake.url,
      `http://10.1.2.3:${port}`,
      `http://[::1]:${port}`,
      `http://169.254.10.20:${port}`,
      `http://localhost:${port}`,
      `http://[::ffff:127.0.0.1]:${port}`,
    ]) {
      const ctx = new MemoryContext(account(baseUrl), { MATTERMOST_BOT_TOKEN: "mm-test-token" });
      const connector = mattermostConnector(ctx.account, fast);
      await connector.start(ctx);
      await until(() => ctx.state_ === "fatal" || undefined, 5_000, `fatal for ${baseUrl}`);
      const error = ctx.statuses.at(-1)!.lastError!;
      assert.match(error, /Mattermost server refused/, baseUrl);
      assert.match(error, /dangerouslyAllowPrivateNetwork/, baseUrl);
      assert.equal(
        ctx.statuses.some((s) => s.state === "connecting"),
        false,
        `${baseUrl}: never tried to connect`,
      );
      await connector.stop("shutdown");
    }
    assert.equal((await calls()).length, before, "no request reached the fake");
    assert.equal(await sockets(), 0, "no socket was opened");
  });

  it("with network.dangerouslyAllowPrivateNetwork the same loopback server is used", async () => {
    const ctx = new MemoryContext(account(fake.url, { dangerouslyAllowPrivateNetwork: true }), {
      MATTERMOST_BOT_TOKEN: "mm-test-token",
    });
    const connector = mattermostConnector(ctx.account, fast);
    await connector.start(ctx);
    await until(() => ctx.state_ === "ready" || undefined, 5_000, "ready");
    await connector.stop("shutdown");
  });

  it("a name is judged by what it resolves to at the connect: localhost → loopback is refused inside the lookup, no request sent", async () => {
    const before = (await calls()).length;
    const url = `http://localhost:${new URL(fake.url).port}/api/v4/users/me`;
    const failed = await new Promise<Error>((resolve, reject) => {
      const req = request(
        url,
        {
          agent: new Agent({ lookup: publicOnlyLookup }),
          headers: { authorization: "Bearer mm-test-token" },
        },
        () => reject(new Error("the request was answered")),
      );
      req.on("error", resolve);
      req.end();
    });
    assert.ok(failed instanceof PrivateNetworkError, String(failed));
    assert.match(failed.message, /localhost resolves to (127\.0\.0\.1|::1), a loopback address/);
    assert.equal((await calls()).length, before);
  });
});
