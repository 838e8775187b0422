import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, describe, it } from "node:test";
import { serveMediaLink } from "../../functions/media/serve-link.ts";
import { signMediaUrl } from "../../functions/media/signed-url.ts";
import { configFromEnv } from "../../functions/channels/gateway-config.ts";
import { startFakeLineApi } from "../../functions/channels/line/simulate/line-api.ts";
import { startFakeTwilioApi } from "../../functions/channels/sms/simulate/twilio-api.ts";

/**
 * The fakes fetch a signed media link the way LINE's app and Twilio do, from the real media route
 * (functions/media/serve-link.ts, as workers/media.ts routes it, served here over Node's HTTP with an in-memory bucket behind `MEDIA`): the
 * workerd suite's Worker has no port they could reach, so this is where their own fetch is shown
 * to get the stored bytes with the signed type, and a forged link to get 403.
 */
const TOKEN = "media-links-fakes-token";
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAQAAAAECAIAAAAmkwkpAAAAEElEQVR4nGP4z8AARwzEcQCukw/x0F8jngAAAABJRU5ErkJggg==",
  "base64",
);
const objects = new Map<string, Uint8Array>([["media/test/fakes/red", new Uint8Array(PNG)]]);
const bucket = {
  put: async (key: string, value: Uint8Array) => void objects.set(key, value),
  get: async (key: string) => {
    const value = objects.get(key);
    return value ? { arrayBuffer: async () => value.slice().buffer } : null;
  },
  delete: async () => undefined,
};

const stops: Array<() => Promise<void>> = [];
after(async () => {
  for (const stop of stops.reverse()) await stop().catch(() => undefined);
});

/** The media route on a loopback port, and the env and config that sign for it. */
async function startRoute() {
  let env: Record<string, unknown>;
  const server: Server = createServer((req, res) => {
    void (async () => {
      const response = await serveMediaLink(
        new Request(`http://127.0.0.1${req.url}`, { method: req.method }),
        env,
      );
      res.writeHead(response.status, Object.fromEntries(response.headers));
      res.end(req.method === "HEAD" ? undefined : Buffer.from(await response.arrayBuffer()));
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  env = {
    MEDIA: bucket,
    EDGECLAW_CONFIG: JSON.stringify({
      gateway: { auth: { token: TOKEN }, publicUrl: origin },
    }),
  };
  stops.push(() => new Promise((resolve) => server.close(() => resolve())));
  const file = { ref: "media/test/fakes/red", name: "red.png", mimeType: "image/png" };
  const link = await signMediaUrl(
    configFromEnv(env as { EDGECLAW_CONFIG?: string }),
    env,
    file,
    600,
  );
  return { link };
}

async function until<T>(read: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 100; i++) {
    const value = await read();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error("the fake never fetched the link");
}

const sha = createHash("sha256").update(PNG).digest("hex");

describe("fakes fetch signed media links as the platforms do", () => {
  it("LINE: an image message's originalContentUrl is fetched and gets the PNG", async () => {
    const { link } = await startRoute();
    const fake = await startFakeLineApi();
    stops.push(() => fake.stop());
    const to = `U${"e".repeat(32)}`;
    const forged = link.replace(/sig=[^&]+/, "sig=AAAA");
    const push = (url: string) =>
      fetch(`${fake.url}/v2/bot/message/push`, {
        method: "POST",
        headers: { authorization: "Bearer t", "content-type": "application/json" },
        body: JSON.stringify({
          to,
          messages: [{ type: "image", originalContentUrl: url, previewImageUrl: url }],
        }),
      });
    assert.equal((await push(link)).status, 200);
    assert.equal((await push(forged)).status, 200);
    // LINE's own rule: only HTTPS links (the fake lets plain http reach loopback only).
    assert.equal((await push("http://media.example/x.png")).status, 400);
    const fetched = await until(async () => {
      const messages = (await (
        await fetch(`${fake.url}/_control/messages?to=${to}`)
      ).json()) as Array<{
        fetched?: { status?: number; sha256?: string; contentType?: string };
      }>;
      return messages.every((m) => m.fetched) ? messages.map((m) => m.fetched!) : undefined;
    });
    assert.equal(fetched[0]!.status, 200);
    assert.equal(fetched[0]!.contentType, "image/png");
    assert.equal(fetched[0]!.sha256, sha);
    assert.equal(fetched[1]!.status, 403);
  });

  it("Twilio: a MediaUrl is fetched (HEAD, then GET) and gets the PNG with its name", async () => {
    const { link } = await startRoute();
    const sid = `AC${"f".repeat(32)}`;
    const fake = await startFakeTwilioApi({ accounts: { [sid]: "secret" } });
    stops.push(() => fake.stop());
    const sent = await fetch(`${fake.url}/2010-04-01/Accounts/${sid}/Messages.json`, {
      method: "POST",
      headers: {
        authorization: `Basic ${Buffer.from(`${sid}:secret`).toString("base64")}`,
        "content-type": "application/x-www-form-urlencoded",
      },
      body: new URLSearchParams({
        To: "+15550001111",
        From: "+15005550006",
        Body: "red.png",
        MediaUrl: link,
      }).toString(),
    });
    assert.equal(sent.status, 201);
    const [fetched] = await until(async () => {
      const [message] = (await (await fetch(`${fake.url}/_control/messages`)).json()) as Array<{
        media_fetched: Array<{ status?: number; sha256?: string; contentDisposition?: string }>;
      }>;
      return message?.media_fetched.length ? message.media_fetched : undefined;
    });
    assert.equal(fetched!.status, 200);
    assert.equal(fetched!.sha256, sha);
    assert.equal(fetched!.contentDisposition, "inline; filename*=UTF-8''red.png");
  });
});
