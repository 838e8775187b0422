import * as z from "zod";
import { sameSecret } from "../../http/same-secret.ts";
import type { ParseResult, VerifyResult, WebhookRequest, WebhookRoute } from "../channel.ts";
import { hmacHex } from "../companion/signature.ts";
import { inboundEnvelopeSchema, type ChatType } from "../../core/envelope.ts";
import { parseJsonBody } from "../parse-json-body.ts";
import { parseIpv4, parseIpv6 } from "../../http/ssrf.ts";
import { mattermostBotToken, type MattermostAccount } from "./config.ts";
import { teamOf } from "./parse.ts";

/**
 * Mattermost interactive buttons: a click is POSTed (JSON) to `/mattermost/interactions/<accountId>`
 * with the button's `context`. Two checks, both before anything is stored:
 * - the caller's address (CF-Connecting-IP, which Cloudflare sets and clients cannot) must be in
 *   `interactions.allowedSourceIps` (addresses or CIDR ranges; unset = loopback only) → else 403;
 * - `context._token` must be OpenClaw's HMAC: secret = HMAC-SHA256(key "openclaw-mattermost-interactions",
 *   bot token) as hex; token = HMAC-SHA256(key = that secret, the context without `_token` as compact
 *   JSON with keys sorted at every depth) as hex; compared in constant time → else 401.
 * A verified click is a system event from that user in that conversation: the same DM/group policy
 * as a message, context for the next run, never a run by itself.
 */

export const INTERACTIONS_PATH_PREFIX = "/mattermost/interactions/";
export const MATTERMOST_INTERACTION_MAX_BODY_BYTES = 64 * 1024;
const SECRET_KEY = "openclaw-mattermost-interactions";
const LOOPBACK_ONLY = ["127.0.0.1", "::1"];

const interactionSchema = z
  .object({
    user_id: z.string().min(1).max(64),
    user_name: z.string().max(100).optional(),
    channel_id: z.string().min(1).max(64),
    channel_name: z.string().max(200).optional(),
    team_id: z.string().max(64).optional(),
    post_id: z.string().min(1).max(64),
    trigger_id: z.string().max(512).optional(),
    context: z.record(z.string(), z.unknown()),
  })
  .loose();
type Interaction = z.infer<typeof interactionSchema>;

/** The HMAC secret buttons are signed with, derived from the bot token (deterministic, so the poster and the Worker agree). */
export function interactionSecret(botToken: string): Promise<string> {
  return hmacHex(SECRET_KEY, botToken);
}

/** `_token` for a button context (every field but `_token` itself). */
export async function interactionToken(
  context: Record<string, unknown>,
  botToken: string,
): Promise<string> {
  const { _token: _ignored, ...signed } = context;
  return hmacHex(await interactionSecret(botToken), canonicalJson(signed));
}

/** Compact JSON with object keys sorted at every depth (arrays keep their order). */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, sortKeys((value as Record<string, unknown>)[key])]),
    );
  }
  return value;
}

export async function verifyInteraction(
  request: WebhookRequest,
  route: WebhookRoute<MattermostAccount>,
  env: Record<string, unknown>,
): Promise<VerifyResult> {
  const source = request.headers.get("cf-connecting-ip")?.trim() ?? "";
  if (!sourceAllowed(source, route.account.interactions?.allowedSourceIps ?? LOOPBACK_ONLY)) {
    console.warn(
      `channels.mattermost (${route.label}): rejected callback source ${source || "(unknown)"}`,
    );
    return { ok: false, status: 403, reason: "rejected callback source" };
  }
  const token = mattermostBotToken(route.account, env);
  if (!token) return { ok: false, reason: "no-secret" };
  const click = parseJsonBody(request.raw, interactionSchema, "a Mattermost button click");
  if (!click.ok) return { ok: false, reason: "missing _token in context" };
  const given = click.value.context._token;
  if (typeof given !== "string" || !given)
    return { ok: false, reason: "missing _token in context" };
  const expected = await interactionToken(click.value.context, token);
  return (await sameSecret(given.toLowerCase(), expected))
    ? { ok: true }
    : { ok: false, reason: "invalid _token" };
}

export function parseInteraction(request: WebhookRequest, account: MattermostAccount): ParseResult {
  const click = parseJsonBody(request.raw, interactionSchema, "a Mattermost button click");
  if (!click.ok) return { kind: "malformed", reason: click.reason };
  const data: Interaction = click.value;
  const actionId =
    typeof data.context.action_id === "string" ? data.context.action_id.slice(0, 64) : "";
  if (!actionId) return { kind: "malformed", reason: "context.action_id is required" };
  const chatType = chatTypeOfClick(data);
  const details = Object.entries(data.context)
    .filter(([key]) => key !== "_token" && key !== "action_id")
    .slice(0, 8)
    .map(([key, value]) => `${key.slice(0, 40)}=${JSON.stringify(value).slice(0, 100)}`)
    .join(", ");
  const envelope = inboundEnvelopeSchema.safeParse({
    dedupKey: `mattermost:${account.accountId}:click:${data.post_id}:${data.user_id}:${data.trigger_id ?? actionId}`,
    kind: "system",
    channel: "mattermost",
    accountId: account.accountId,
    chatType,
    peerId: chatType === "direct" ? data.user_id : data.channel_id,
    ...(teamOf(chatType, data.team_id) ? { teamId: teamOf(chatType, data.team_id) } : {}),
    senderId: data.user_id,
    ...(data.user_name ? { senderName: data.user_name } : {}),
    messageId: data.post_id,
    text: `Mattermost button clicked by ${data.user_id}: ${actionId}${details ? ` (${details})` : ""} on post ${data.post_id}`,
    receivedAt: request.receivedAt,
    route: {
      channel: "mattermost",
      accountId: account.accountId,
      to: data.channel_id,
      extra: { chatType },
    },
  });
  if (!envelope.success)
    return {
      kind: "malformed",
      reason: `click: ${envelope.error.issues[0]?.message ?? "invalid"}`,
    };
  return { kind: "envelopes", envelopes: [envelope.data] };
}

/** A direct channel is named by its two members' ids (`a__b`); the clicker must be one of them. Anything else is judged as a channel (the stricter policy). */
function chatTypeOfClick(data: Interaction): ChatType {
  const name = data.channel_name ?? "";
  const members = /^([a-z0-9]{26})__([a-z0-9]{26})$/.exec(name);
  if (members && (members[1] === data.user_id || members[2] === data.user_id)) return "direct";
  if (/^[a-f0-9]{40}$/.test(name)) return "group";
  return "channel";
}

/** An exact address or a CIDR range (IPv4 or IPv6), compared numerically. */
export function sourceAllowed(source: string, allowed: readonly string[]): boolean {
  const address = addressBits(source);
  if (!address) return false;
  return allowed.some((entry) => {
    const [base, prefix] = entry.split("/");
    const range = addressBits(base ?? "");
    if (!range || range.length !== address.length) return false;
    const bits = prefix === undefined ? address.length : Number(prefix);
    if (!Number.isInteger(bits) || bits < 0 || bits > address.length) return false;
    return address.slice(0, bits) === range.slice(0, bits);
  });
}

/** The address as a string of bits (32 for IPv4, 128 for IPv6; an IPv4-mapped IPv6 address counts as its IPv4). */
function addressBits(text: string): string | undefined {
  const host = text.trim().replace(/^\[|\]$/g, "");
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(host)) {
    const v4 = parseIpv4(host);
    return v4 === undefined ? undefined : v4.toString(2).padStart(32, "0");
  }
  if (!host.includes(":")) return undefined;
  const groups = parseIpv6(host);
  if (!groups) return undefined;
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return (((groups[6]! << 16) | groups[7]!) >>> 0).toString(2).padStart(32, "0");
  }
  return groups.map((g) => g.toString(2).padStart(16, "0")).join("");
}
