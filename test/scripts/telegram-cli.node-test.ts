import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import {
  startFakeTelegramApi,
  type FakeTelegramApi,
} from "../../functions/channels/telegram/simulate/telegram-api.ts";
import { projectRoot, tempProject } from "./helpers.ts";

/** `edgeclaw channels telegram …` against the fake Bot API (the same one the workerd tests use). */
const BOT_TOKEN = "6100000001:cli-test-token";
let fake: FakeTelegramApi;

function edgeclaw(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(projectRoot, "bin", "edgeclaw.mjs"), ...args],
      {
        cwd: projectRoot,
        timeout: 60_000,
        env: {
          ...process.env,
          EDGECLAW_URL: "",
          EDGECLAW_DATA_DIR: join(tempProject(), "data"),
          TELEGRAM_BOT_TOKEN: BOT_TOKEN,
          TELEGRAM_API_ROOT: fake.url,
          ...env,
        },
      },
      (error, stdout, stderr) =>
        resolve({
          status: error ? (typeof error.code === "number" ? error.code : 1) : 0,
          stdout,
          stderr,
        }),
    );
  });
}

const registered = async () =>
  (await (await fetch(`${fake.url}/_control/webhook?bot_id=6100000001`)).json()) as {
    url: string;
    secret_token: string;
    allowed_updates: string[];
  } | null;

describe("edgeclaw channels telegram", () => {
  before(async () => {
    fake = await startFakeTelegramApi();
  });
  after(async () => {
    await fake.stop();
  });

  it("set-webhook registers the URL with a generated secret token and the handled update kinds, and says which secret to store", async () => {
    const run = await edgeclaw([
      "channels",
      "telegram",
      "set-webhook",
      "--url",
      "https://claw.example.workers.dev/telegram-webhook",
    ]);
    assert.equal(run.status, 0, run.stderr);
    const hook = await registered();
    assert.ok(hook);
    assert.equal(hook.url, "https://claw.example.workers.dev/telegram-webhook");
    assert.match(hook.secret_token, /^[A-Za-z0-9_-]{48}$/);
    assert.deepEqual(hook.allowed_updates, ["message", "edited_message", "callback_query"]);
    assert.ok(
      run.stdout.includes(
        `echo '${hook.secret_token}' | npx wrangler secret put TELEGRAM_WEBHOOK_SECRET`,
      ),
      run.stdout,
    );
    assert.ok(
      !run.stdout.includes(BOT_TOKEN) && !run.stderr.includes(BOT_TOKEN),
      "the bot token is never printed",
    );

    const again = await edgeclaw([
      "channels",
      "telegram",
      "set-webhook",
      "--url",
      "https://claw.example.workers.dev/telegram-webhook",
      "--account",
      "biz",
      "--json",
    ]);
    assert.equal(again.status, 0, again.stderr);
    const json = JSON.parse(again.stdout) as { secretName: string; secretToken: string };
    assert.equal(json.secretName, "TELEGRAM_WEBHOOK_SECRET_BIZ");
    assert.notEqual(json.secretToken, hook.secret_token, "a new token each time");
    assert.equal((await registered())?.secret_token, json.secretToken);
  });

  it("info shows the bot and the registered webhook; delete-webhook removes it", async () => {
    await edgeclaw([
      "channels",
      "telegram",
      "set-webhook",
      "--url",
      "https://claw.example.workers.dev/telegram-webhook",
    ]);
    const info = await edgeclaw(["channels", "telegram", "info"]);
    assert.equal(info.status, 0, info.stderr);
    assert.match(info.stdout, /bot: +@edgeclaw_test_bot \(id 6100000001\)/);
    assert.match(info.stdout, /webhook: +https:\/\/claw\.example\.workers\.dev\/telegram-webhook/);
    const removed = await edgeclaw(["channels", "telegram", "delete-webhook"]);
    assert.equal(removed.status, 0, removed.stderr);
    assert.equal(await registered(), null);
    assert.match(
      (await edgeclaw(["channels", "telegram", "info"])).stdout,
      /webhook: +\(none: run set-webhook\)/,
    );
  });

  it("refuses a non-https URL, a bad secret, a missing or refused token, with a reason", async () => {
    const http = await edgeclaw([
      "channels",
      "telegram",
      "set-webhook",
      "--url",
      "http://claw.example/telegram-webhook",
    ]);
    assert.equal(http.status, 2, "a usage error");
    assert.match(http.stderr, /--url must be the public https:\/\/ URL/);
    const badSecret = await edgeclaw([
      "channels",
      "telegram",
      "set-webhook",
      "--url",
      "https://claw.example/t",
      "--secret",
      "has spaces",
    ]);
    assert.match(badSecret.stderr, /--secret must be 1-256 characters/);
    const noToken = await edgeclaw(["channels", "telegram", "info"], { TELEGRAM_BOT_TOKEN: "" });
    assert.equal(noToken.status, 1);
    assert.match(noToken.stderr, /no bot token/);
    const refused = await edgeclaw([
      "channels",
      "telegram",
      "info",
      "--bot-token",
      "6100000001:invalid",
    ]);
    assert.equal(refused.status, 1);
    assert.match(refused.stderr, /refused the bot token \(401 Unauthorized\)/);
    assert.ok(!refused.stderr.includes("6100000001:invalid"));
  });

  it("has its own --help", async () => {
    const run = await edgeclaw(["channels", "telegram", "set-webhook", "--help"]);
    assert.equal(run.status, 0);
    assert.match(
      run.stdout,
      /^usage: edgeclaw channels telegram set-webhook \[--bot-token <token>\]/,
    );
  });
});
