import { env, runInDurableObject, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { SessionStore } from "../../durable-objects/session/storage.ts";
import { deliverDueOutbox } from "../../durable-objects/session/outbox/deliver-due.ts";
import { adapterFor } from "../../functions/channels/registry.ts";
import { configFromEnv } from "../../functions/channels/gateway-config.ts";
import type { ReplyRoute } from "../../functions/core/envelope.ts";
import type { OutboundFileRef } from "../../functions/media/outbound.ts";
import { fromBase64 } from "../../functions/media/parts.ts";
import { redPng } from "../fixtures/media/images.ts";
import { fakeModelUrl } from "../agent/model-helpers.ts";
import { sessionStub } from "../durable-objects/helpers.ts";
import { TEST_TWILIO } from "../../functions/channels/sms/test-fixtures.ts";

/**
 * Files out on the platforms that take media only as a link they fetch: LINE (`image` /
 * `audio` messages with `originalContentUrl`, else a text message with the link) and Twilio MMS
 * (`MediaUrl`). Each goes through the channel's real send code to its fake, from an outbox row
 * holding only the media store reference; the link is then fetched through the Worker's signed
 * media route as the platform would (the suite's Worker has no port the fakes could reach, so
 * the test fetches it through SELF). A crash between the send and "sent" never shows it twice.
 */

const vars = env as unknown as Record<string, string>;
const unique = () => Date.now() * 10 + Math.floor(Math.random() * 10);
const lineUser = (n: number) => `U${n.toString(16).padStart(32, "0")}`;

async function sha256(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

async function mp3Fixture(): Promise<Uint8Array> {
  const res = await fetch(`${fakeModelUrl()}/_control/fixture/voice.mp3`);
  return fromBase64(((await res.json()) as { base64: string }).base64)!;
}

async function stored(key: string, bytes: Uint8Array, name: string, mimeType: string) {
  await env.MEDIA!.put(key, bytes);
  return { ref: key, name, mimeType, sizeBytes: bytes.byteLength } satisfies OutboundFileRef;
}

function deliver(store: SessionStore) {
  return deliverDueOutbox({
    store,
    adapterFor,
    ctx: { env: env as unknown as Record<string, unknown>, config: configFromEnv(env) },
    policy: { maxAttempts: 3, maxBackoffMs: 1000 },
    progressStateFor: () => undefined,
    now: Date.now,
    random: () => 0.5,
  });
}

/** Sends one file row; with `crash`, the row is then put back to "sending" and delivered again. */
async function sendRow(route: ReplyRoute, file: OutboundFileRef, n: number, crash = false) {
  await runInDurableObject(
    sessionStub(`agent:main:link-${route.channel}-${n}`),
    async (_i, state) => {
      const store = new SessionStore(state.storage.sql);
      const id = `run:${n}:file:0`;
      store.outbox.insert(
        { id, runId: null, route, text: "", chunkIndex: 0, chunkCount: 1, media: file },
        Date.now() - 1000,
      );
      expect(await deliver(store)).toEqual([]);
      if (crash) {
        // The platform has the message; the Durable Object went down before it wrote "sent".
        store.outbox.update(id, { state: "sending" }, Date.now());
        expect(await deliver(store)).toEqual([]);
      }
      const row = store.outbox.rows().find((r) => r.id === id)!;
      expect(row.state).toBe("sent");
    },
  );
}

/** The link as the platform fetches it, through the Worker (the public origin replaced by SELF's). */
async function fetchLink(link: string, method = "GET") {
  const url = new URL(link);
  expect(url.origin).toBe("https://127.0.0.1:9");
  return SELF.fetch(`https://edgeclaw.test${url.pathname}${url.search}`, { method });
}

interface LineDelivered {
  type: string;
  text: string;
  url?: string;
  duration?: number;
}
const lineMessages = async (to: string) =>
  (await (
    await fetch(`${vars.FAKE_LINE_URL}/_control/messages?to=${to}`)
  ).json()) as LineDelivered[];

describe("files out by signed link", { timeout: 60_000 }, () => {
  it("line: a PNG is an image message whose link serves the stored bytes", async () => {
    const n = unique();
    const to = lineUser(n);
    const bytes = redPng();
    const file = await stored(`media/test/links/line-${n}`, bytes, "chart.png", "image/png");
    await sendRow({ channel: "line", accountId: "default", to }, file, n);
    const [message, ...rest] = await lineMessages(to);
    expect(rest).toEqual([]);
    expect(message?.type).toBe("image");
    const got = await fetchLink(message!.url!);
    expect(got.status).toBe(200);
    expect(got.headers.get("content-type")).toBe("image/png");
    expect(got.headers.get("x-content-type-options")).toBe("nosniff");
    expect(await sha256(new Uint8Array(await got.arrayBuffer()))).toBe(await sha256(bytes));
  });

  it("line: an MP3 is an audio message with its duration; a Markdown file is a link", async () => {
    const n = unique();
    const to = lineUser(n);
    const mp3 = await mp3Fixture();
    await sendRow(
      { channel: "line", accountId: "default", to },
      await stored(`media/test/links/line-mp3-${n}`, mp3, "reply.mp3", "audio/mpeg"),
      n,
    );
    const md = new TextEncoder().encode("# Q3\n");
    await sendRow(
      { channel: "line", accountId: "default", to },
      await stored(`media/test/links/line-md-${n}`, md, "q3.md", "text/markdown"),
      n + 1,
    );
    const [audio, text] = await lineMessages(to);
    expect(audio?.type).toBe("audio");
    // espeak-ng's phrase in voice.mp3 plays about two seconds.
    expect(audio?.duration).toBeGreaterThan(1000);
    expect(audio?.duration).toBeLessThan(5000);
    expect(text?.type).toBe("text");
    const link = /https:\/\/\S+/.exec(text!.text)![0];
    expect(text!.text.startsWith("📎 q3.md\n")).toBe(true);
    const got = await fetchLink(link);
    expect(await got.text()).toBe("# Q3\n");
    expect(got.headers.get("content-disposition")).toBe("inline; filename*=UTF-8''q3.md");
  });

  it("line: a crash between the push and 'sent' pushes again under the same retry key, shown once", async () => {
    const n = unique();
    const to = lineUser(n);
    const file = await stored(`media/test/links/line-crash-${n}`, redPng(), "a.png", "image/png");
    await sendRow({ channel: "line", accountId: "default", to }, file, n, true);
    expect((await lineMessages(to)).length).toBe(1);
    const pushes = (await (
      await fetch(`${vars.FAKE_LINE_URL}/_control/calls?api=push&to=${to}`)
    ).json()) as Array<{ status: number; retryKey: string }>;
    expect(pushes.map((p) => p.status)).toEqual([200, 409]);
    expect(pushes[0]!.retryKey).toBe(pushes[1]!.retryKey);
  });

  it("sms: a file is one MMS whose MediaUrl serves it (HEAD and GET), Markdown as text/plain", async () => {
    const n = unique();
    const to = `+1556${String(n).slice(-7)}`;
    const md = new TextEncoder().encode("# Q3 report\n");
    const file = await stored(`media/test/links/sms-${n}`, md, "q3.md", "text/markdown");
    await sendRow({ channel: "sms", accountId: "default", to }, file, n, true);
    const messages = (await (
      await fetch(`${vars.FAKE_TWILIO_URL}/_control/messages?to=${encodeURIComponent(to)}`)
    ).json()) as Array<{ body: string; num_media: string; media_urls: string[]; from: string }>;
    // Sent once, and after the crash reconcile found it in the account's log (Body + media).
    expect(messages.length).toBe(1);
    expect(messages[0]).toMatchObject({
      body: "q3.md",
      num_media: "1",
      from: TEST_TWILIO.fromNumber,
    });
    const head = await fetchLink(messages[0]!.media_urls[0]!, "HEAD");
    expect(head.status).toBe(200);
    expect(head.headers.get("content-type")).toBe("text/plain");
    const got = await fetchLink(messages[0]!.media_urls[0]!);
    expect(await got.text()).toBe("# Q3 report\n");
  });

  it("googlechat: a file is a message linking to it; a crash re-sends under the same message id, shown once", async () => {
    const n = unique();
    const space = `spaces/FILE${n}`;
    const md = new TextEncoder().encode("# Q3 notes\n");
    const file = await stored(`media/test/links/gchat-${n}`, md, "q3.md", "text/markdown");
    await sendRow({ channel: "googlechat", accountId: "default", to: space }, file, n, true);
    const messages = (
      (await (
        await fetch(`${vars.FAKE_GOOGLECHAT_URL}/_control/messages?space=${space}`)
      ).json()) as { messages: Array<{ text: string }> }
    ).messages;
    expect(messages.length).toBe(1);
    expect(messages[0]!.text).toContain("q3.md");
    const got = await fetchLink(/https:\/\/[^\s|>)]+/.exec(messages[0]!.text)![0]);
    expect(await got.text()).toBe("# Q3 notes\n");
  });

  it("msteams: a file is a message linking to it; a crash is not re-sent and the chat is told once", async () => {
    const n = unique();
    const conversation = `a:file${n}`;
    const route: ReplyRoute = {
      channel: "msteams",
      accountId: "default",
      to: conversation,
      extra: { serviceUrl: vars.FAKE_MSTEAMS_URL!, conversationType: "personal" },
    };
    const file = await stored(`media/test/links/teams-${n}`, redPng(), "chart.png", "image/png");
    await runInDurableObject(sessionStub(`agent:main:link-teams-${n}`), async (_i, state) => {
      const store = new SessionStore(state.storage.sql);
      const id = `run:${n}:file:0`;
      store.outbox.insert(
        { id, runId: null, route, text: "", chunkIndex: 0, chunkCount: 1, media: file },
        Date.now() - 1000,
      );
      expect(await deliver(store)).toEqual([]);
      store.outbox.update(id, { state: "sending" }, Date.now());
      await deliver(store);
      const row = store.outbox.rows().find((r) => r.id === id)!;
      // No idempotency key and no history to read: not re-sent, and the chat is told once.
      expect(row.state).toBe("dead");
      expect(store.outbox.rows().some((r) => r.id === `${id}:undelivered`)).toBe(true);
    });
    const activities = (
      (await (
        await fetch(
          `${vars.FAKE_MSTEAMS_URL}/_control/activities?conversation=${encodeURIComponent(conversation)}`,
        )
      ).json()) as { activities: Array<{ text: string }> }
    ).activities;
    const withLink = activities.filter((a) => a.text.includes("/media/"));
    expect(withLink.length).toBe(1);
    const got = await fetchLink(/https:\/\/[^\s)]+/.exec(withLink[0]!.text)![0]);
    expect(got.headers.get("content-type")).toBe("image/png");
  });

  it("the route: a forged, altered or expired link is 403 with nothing else; a gone object 404", async () => {
    const n = unique();
    const to = `+1557${String(n).slice(-7)}`;
    const key = `media/test/links/route-${n}`;
    await sendRow(
      { channel: "sms", accountId: "default", to },
      await stored(key, new TextEncoder().encode("secret numbers"), "n.txt", "text/plain"),
      n,
    );
    const [message] = (await (
      await fetch(`${vars.FAKE_TWILIO_URL}/_control/messages?to=${encodeURIComponent(to)}`)
    ).json()) as Array<{ media_urls: string[] }>;
    const good = new URL(message!.media_urls[0]!);
    expect((await fetchLink(good.href)).status).toBe(200);
    const variants: Array<(u: URL) => void> = [
      (u) => u.searchParams.set("sig", `${u.searchParams.get("sig")!.slice(0, -2)}AA`),
      (u) => u.searchParams.set("type", "text/html"),
      (u) => u.searchParams.set("name", "other.txt"),
      (u) => u.searchParams.set("exp", String(Number(u.searchParams.get("exp")) + 1)),
      (u) => u.searchParams.set("exp", String(Math.floor(Date.now() / 1000) - 10)),
      (u) => u.searchParams.delete("sig"),
      (u) => (u.pathname = u.pathname.replace(`route-${n}`, `route-${n + 1}`)),
    ];
    for (const change of variants) {
      const forged = new URL(good.href);
      change(forged);
      const answer = await fetchLink(forged.href);
      expect(answer.status, forged.search).toBe(403);
      expect(await answer.text()).toBe("");
    }
    await env.MEDIA!.delete(key);
    expect((await fetchLink(good.href)).status).toBe(404);
  });

  it("no public URL: the file is refused before it is staged, with the key to set", () => {
    const config = configFromEnv(env);
    const without = { ...config, gateway: { ...config.gateway, publicUrl: undefined } };
    const ctx = {
      env: env as unknown as Record<string, unknown>,
      config: without,
      account: undefined,
    };
    const file = { name: "a.png", mimeType: "image/png", sizeBytes: 73 };
    expect(adapterFor("line")!.fileRefusal!(file, ctx)).toContain("gateway.publicUrl");
    for (const channel of ["sms", "googlechat", "msteams"])
      expect(adapterFor(channel)!.fileRefusal!(file, ctx)).toContain("gateway.publicUrl");
  });
});
