import * as z from "zod";
import type { ChannelDefinition, WebhookRoute } from "../../../functions/channels/channel.ts";
import type { InboundEnvelope } from "../../../functions/core/envelope.ts";
import { channelAccessSchema } from "../../../functions/config/channel-access.ts";
import { resolveSecret, secretInputSchema } from "../../../functions/config/secret-ref.ts";

/**
 * "relay": a test-only channel, registered from the test setup (test/setup/register-channels.ts),
 * never shipped. It is a whole channel in one folder — config schema, verify, parse, send — to show
 * that adding one touches nothing else. Its platform (test/fakes/relay-api.ts) is the smallest with
 * an idempotency key: webhooks are `{events: [{id, from, chat?, thread?, text}]}` signed with
 * `x-relay-signature: sha256=<hex HMAC-SHA256(secret, body)>`; replies go to `POST /messages`.
 */
export const relayConfigSchema = channelAccessSchema.safeExtend({
  webhookPath: z.string().startsWith("/").default("/relay/webhook"),
  secret: secretInputSchema.optional(),
  token: secretInputSchema.optional(),
  apiBaseUrl: z.url().default("https://relay.invalid"),
  /** How long a send waits for the platform before its outcome counts as unknown. */
  sendTimeoutMs: z.number().int().positive().default(1_000),
});
export type RelayConfig = z.infer<typeof relayConfigSchema>;

const eventsSchema = z.object({
  events: z.array(
    z.object({
      id: z.string().min(1),
      from: z.string().min(1),
      chat: z.string().min(1).optional(),
      thread: z.string().optional(),
      text: z.string(),
    }),
  ),
});

export const RELAY_MAX_BODY_BYTES = 4 * 1024 * 1024;

function sameInConstantTime(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

export async function signRelayBody(secret: string, body: string | Uint8Array): Promise<string> {
  const key = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const bytes = typeof body === "string" ? new TextEncoder().encode(body) : new Uint8Array(body);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, bytes));
  return `sha256=${[...mac].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

export const relayChannel: ChannelDefinition<RelayConfig, RelayConfig> = {
  id: "relay",
  configSchema: relayConfigSchema,
  // One account: the block itself.
  account: (relay) => relay,
  // Its secret is the test config's own value: nothing for the checks to name.
  requirements: () => [],
  webhook: {
    routes(relay): WebhookRoute<RelayConfig>[] {
      return relay.enabled
        ? [{ path: relay.webhookPath, accountId: "default", label: "Relay", account: relay }]
        : [];
    },
    // Room for an event larger than a Durable Object's SQLite row (2 MB): the multi-event test's failing accept.
    maxBodyBytes: () => RELAY_MAX_BODY_BYTES,
    async verify(request, route, env) {
      const secret = resolveSecret(route.account.secret, env);
      if (!secret) return { ok: false, reason: "no-secret" };
      const given = request.headers.get("x-relay-signature");
      if (!given) return { ok: false, reason: "missing signature" };
      const expected = await signRelayBody(secret, request.raw);
      return sameInConstantTime(given, expected)
        ? { ok: true }
        : { ok: false, reason: "bad signature" };
    },
    parse(request, route) {
      let json: unknown;
      try {
        json = JSON.parse(new TextDecoder().decode(request.raw));
      } catch {
        return { kind: "malformed", reason: "not JSON" };
      }
      const parsed = eventsSchema.safeParse(json);
      if (!parsed.success) return { kind: "malformed", reason: "not a relay delivery" };
      // Deliberately no text bound here, so an event can be too large for the SessionDO to store.
      const envelopes = parsed.data.events.map(
        (event): InboundEnvelope => ({
          dedupKey: `relay:${event.id}`,
          kind: "message",
          channel: "relay",
          accountId: route.accountId,
          chatType: event.chat ? "group" : "direct",
          peerId: event.chat ?? event.from,
          ...(event.thread ? { threadId: event.thread } : {}),
          senderId: event.from,
          messageId: event.id,
          text: event.text,
          receivedAt: request.receivedAt,
          route: {
            channel: "relay",
            accountId: route.accountId,
            to: event.chat ?? event.from,
            ...(event.thread ? { threadId: event.thread } : {}),
          },
        }),
      );
      return { kind: "envelopes", envelopes };
    },
  },
  outbound: {
    id: "relay",
    textChunkLimit: () => 4000,
    idempotentSends: true,
    async send(message, ctx) {
      const relay = ctx.account;
      const token = resolveSecret(relay?.token, ctx.env);
      if (!relay || !token)
        return { ok: false, retryable: false, error: "channels.relay has no token" };
      if (message.retract) return { ok: true };
      let res: Response;
      try {
        res = await fetch(`${relay.apiBaseUrl}/messages`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${token}`,
            "idempotency-key": message.id,
            "content-type": "application/json",
          },
          body: JSON.stringify({
            chat: message.route.to,
            ...(message.route.threadId ? { thread: message.route.threadId } : {}),
            text: message.text,
          }),
          signal: AbortSignal.timeout(relay.sendTimeoutMs),
        });
      } catch (error) {
        return {
          ok: false,
          outcomeUnknown: true,
          error: error instanceof Error ? error.message : String(error),
        };
      }
      if (res.ok) return { ok: true, platformMessageId: ((await res.json()) as { id: string }).id };
      await res.body?.cancel();
      return {
        ok: false,
        retryable: res.status === 429 || res.status >= 500,
        error: `relay answered ${res.status}`,
      };
    },
  },
};
