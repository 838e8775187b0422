import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { SessionStore } from "../../durable-objects/session/storage.ts";
import { deliverDueOutbox } from "../../durable-objects/session/outbox/deliver-due.ts";
import { adapterFor } from "../../functions/channels/registry.ts";
import { configFromEnv } from "../../functions/channels/gateway-config.ts";
import type { ReplyRoute } from "../../functions/core/envelope.ts";
import type { OutboundFileRef } from "../../functions/media/outbound.ts";
import { sessionStub } from "../durable-objects/helpers.ts";

/**
 * A reply's file through each channel's real send code to its fake (the test kits' fakes, real
 * wire formats: Slack's external upload, Telegram's multipart sendDocument, Discord's payload_json
 * + files[0], Mattermost's /files then /posts, Feishu's im/v1/files then a file message), from an outbox row that holds only the media
 * store reference. Each arrives once with the stored bytes; a crash after the platform took the
 * upload but before "sent" was written (the row left "sending") never sends it a second time.
 */

const vars = env as unknown as Record<string, string>;
const FILE_TEXT = "# Q3 report\n\nRevenue up 12 %.\n";

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

async function storedFile(key: string): Promise<OutboundFileRef> {
  const bytes = new TextEncoder().encode(FILE_TEXT);
  await env.MEDIA!.put(key, bytes);
  return { ref: key, name: "report.md", mimeType: "text/markdown", sizeBytes: bytes.byteLength };
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

async function getJson<T>(url: string): Promise<T> {
  return (await (await fetch(url)).json()) as T;
}

interface Case {
  channel: string;
  route: (n: number) => ReplyRoute;
  /** The files the fake holds in that conversation, each as its SHA-256. */
  uploaded: (route: ReplyRoute) => Promise<string[]>;
  /** What a crash after the upload leads to: reconciled as landed, or not re-sent and told once. */
  afterCrash: "landed" | "told";
}

const unique = () => Date.now() * 10 + Math.floor(Math.random() * 10);

const CASES: Case[] = [
  {
    channel: "slack",
    route: (n) => ({ channel: "slack", accountId: "default", to: `CFILE${n}` }),
    uploaded: async (route) =>
      (
        await getJson<Array<{ files?: Array<{ sha256: string }> }>>(
          `${vars.FAKE_SLACK_URL}/_control/messages?channel=${route.to}`,
        )
      ).flatMap((m) => (m.files ?? []).map((f) => f.sha256)),
    afterCrash: "landed",
  },
  {
    channel: "telegram",
    route: (n) => ({ channel: "telegram", accountId: "default", to: String(n) }),
    uploaded: async (route) =>
      (
        await getJson<Array<{ file?: { sha256: string } }>>(
          `${vars.FAKE_TELEGRAM_URL}/_control/messages?chat_id=${route.to}`,
        )
      ).flatMap((m) => (m.file ? [m.file.sha256] : [])),
    afterCrash: "told",
  },
  {
    channel: "discord",
    route: (n) => ({ channel: "discord", accountId: "default", to: String(n) }),
    uploaded: async (route) =>
      (
        await getJson<Array<{ attachments?: Array<{ sha256: string }> }>>(
          `${vars.FAKE_DISCORD_URL}/_control/messages?channel_id=${route.to}`,
        )
      ).flatMap((m) => (m.attachments ?? []).map((a) => a.sha256)),
    // Within Discord's nonce window the same nonce is sent again and answered with the first message.
    afterCrash: "landed",
  },
  {
    channel: "mattermost",
    route: (n) => ({ channel: "mattermost", accountId: "default", to: `chfile${n}` }),
    uploaded: async (route) =>
      (
        await getJson<Array<{ metadata?: { files: Array<{ sha256: string }> } }>>(
          `${vars.FAKE_MATTERMOST_URL}/_control/posts?channel=${route.to}`,
        )
      ).flatMap((p) => (p.metadata?.files ?? []).map((f) => f.sha256)),
    afterCrash: "landed",
  },
  {
    channel: "feishu",
    route: (n) => ({ channel: "feishu", accountId: "default", to: `oc_file${n}` }),
    uploaded: async (route) =>
      (
        await getJson<Array<{ file?: { sha256: string } }>>(
          `${vars.FAKE_FEISHU_URL}/_control/messages?chat=${route.to}`,
        )
      ).flatMap((m) => (m.file ? [m.file.sha256] : [])),
    // Feishu sends one message per uuid within the hour: the file is simply sent again under it.
    afterCrash: "landed",
  },
];

describe("files out, per channel", { timeout: 60_000 }, () => {
  for (const c of CASES) {
    it(`${c.channel}: a file row is uploaded once with the stored bytes`, async () => {
      const n = unique();
      const route = c.route(n);
      const file = await storedFile(`media/test/out/${c.channel}-${n}`);
      await runInDurableObject(
        sessionStub(`agent:main:file-${c.channel}-${n}`),
        async (_i, state) => {
          const store = new SessionStore(state.storage.sql);
          store.outbox.insert(
            {
              id: `run:${n}:file:0`,
              runId: null,
              route,
              text: "",
              chunkIndex: 0,
              chunkCount: 1,
              media: file,
            },
            Date.now(),
          );
          const dead = await deliver(store);
          expect(dead).toEqual([]);
          const [row] = store.outbox.rows();
          expect(row?.state).toBe("sent");
          expect(row?.media?.ref).toBe(file.ref);
        },
      );
      expect(await c.uploaded(route)).toEqual([await sha256(FILE_TEXT)]);
    });

    it(`${c.channel}: a crash between the upload and "sent" never sends the file twice`, async () => {
      const n = unique();
      const route = c.route(n);
      const file = await storedFile(`media/test/out/${c.channel}-crash-${n}`);
      await runInDurableObject(
        sessionStub(`agent:main:file-crash-${c.channel}-${n}`),
        async (_i, state) => {
          const store = new SessionStore(state.storage.sql);
          const id = `run:${n}:file:0`;
          store.outbox.insert(
            { id, runId: null, route, text: "", chunkIndex: 0, chunkCount: 1, media: file },
            Date.now() - 1000,
          );
          await deliver(store);
          // The platform has the file; the Durable Object went down before it wrote "sent".
          store.outbox.update(id, { state: "sending" }, Date.now());
          const dead = await deliver(store);
          const row = store.outbox.rows().find((r) => r.id === id)!;
          if (c.afterCrash === "landed") {
            expect(dead).toEqual([]);
            expect(row.state).toBe("sent");
          } else {
            // No history to look in and no idempotency key: not re-sent, and the chat is told once.
            expect(row.state).toBe("dead");
            expect(row.lastError).toContain("not re-sent");
            expect(store.outbox.rows().some((r) => r.id === `${id}:undelivered`)).toBe(true);
          }
        },
      );
      expect(await c.uploaded(route)).toEqual([await sha256(FILE_TEXT)]);
    });
  }

  it("a file whose bytes are gone from the media store is a dead letter, with nothing sent", async () => {
    const n = unique();
    const route = CASES[0]!.route(n);
    await runInDurableObject(sessionStub(`agent:main:file-gone-${n}`), async (_i, state) => {
      const store = new SessionStore(state.storage.sql);
      const media = {
        ref: `media/test/out/never-${n}`,
        name: "x.md",
        mimeType: "text/markdown",
        sizeBytes: 3,
      };
      store.outbox.insert(
        {
          id: `run:${n}:file:0`,
          runId: null,
          route,
          text: "",
          chunkIndex: 0,
          chunkCount: 1,
          media,
        },
        Date.now(),
      );
      const dead = await deliver(store);
      expect(dead[0]?.reason).toBe("the file is no longer in the media store");
    });
    expect(await CASES[0]!.uploaded(route)).toEqual([]);
  });
});
