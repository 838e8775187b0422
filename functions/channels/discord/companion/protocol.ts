/**
 * Discord Gateway v10 facts the connector depends on
 * (https://discord.com/developers/docs/events/gateway, …/topics/opcodes-and-status-codes).
 */

export const OP = {
  DISPATCH: 0,
  HEARTBEAT: 1,
  IDENTIFY: 2,
  RESUME: 6,
  RECONNECT: 7,
  INVALID_SESSION: 9,
  HELLO: 10,
  HEARTBEAT_ACK: 11,
} as const;

export interface GatewayFrame {
  op: number;
  d?: unknown;
  s?: number | null;
  t?: string | null;
}

export function isGatewayFrame(value: unknown): value is GatewayFrame {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { op?: unknown }).op === "number"
  );
}

/**
 * What a close code means for the next connection:
 * - `fatal`: no retry can fix it (4004 authentication failed, 4010 invalid shard, 4011 sharding
 *   required, 4012 invalid API version, 4013 invalid intents, 4014 disallowed intents — a privileged
 *   intent not enabled in the developer portal); the connector stops with this text as its error.
 * - `reidentify`: the session cannot be resumed (4007 invalid seq, 4009 session timed out); start a new one.
 * - `resume`: everything else (4000 unknown error … 4008 rate limited, 1006 abnormal, our own 4900).
 */
export function classifyClose(
  code: number,
): { kind: "fatal"; error: string } | { kind: "reidentify" } | { kind: "resume" } {
  switch (code) {
    case 4004:
      return {
        kind: "fatal",
        error:
          "Discord refused the bot token (close 4004 authentication failed): check the token's env var",
      };
    case 4010:
    case 4011:
      return {
        kind: "fatal",
        error: `Discord requires sharding this bot differently (close ${code}); edgeclaw runs one shard`,
      };
    case 4012:
      return { kind: "fatal", error: "Discord refused the Gateway API version (close 4012)" };
    case 4013:
      return { kind: "fatal", error: "Discord refused the intents (close 4013 invalid intents)" };
    case 4014:
      return {
        kind: "fatal",
        error:
          "Discord refused a privileged intent (close 4014 disallowed intents): enable Message Content (and Server Members if used) on the Bot page, or set channels.discord.intents",
      };
    case 4007:
    case 4009:
      return { kind: "reidentify" };
    default:
      return { kind: "resume" };
  }
}

/** Our own close code when we drop a connection we mean to resume (1000/1001 would end the session). */
export const RESUMABLE_CLOSE = 4900;

/** The dispatches the Worker parses (functions/channels/discord/parse.ts); the rest only update local context. */
export const FORWARDED = new Set([
  "MESSAGE_CREATE",
  "MESSAGE_UPDATE",
  "MESSAGE_REACTION_ADD",
  "GUILD_MEMBER_ADD",
]);

/**
 * The outbox key of a forwarded dispatch, stable across Gateway replays (a RESUME replays the same
 * events with the same ids): the message id, an edit's `edited_timestamp`, the reacting user and emoji.
 */
export function dispatchEventId(t: string, d: Record<string, unknown>): string {
  const str = (value: unknown) =>
    typeof value === "string" || typeof value === "number" ? String(value) : "";
  switch (t) {
    case "MESSAGE_CREATE":
      return `message:${str(d.id)}`;
    case "MESSAGE_UPDATE":
      return `edit:${str(d.id)}:${str(d.edited_timestamp)}`;
    case "MESSAGE_REACTION_ADD": {
      const emoji = (d.emoji ?? {}) as Record<string, unknown>;
      return `reaction:${str(d.message_id)}:${str(d.user_id)}:${str(emoji.id) || str(emoji.name)}`.slice(
        0,
        200,
      );
    }
    case "GUILD_MEMBER_ADD":
      return `join:${str(d.guild_id)}:${str((d.user as Record<string, unknown> | undefined)?.id)}:${str(d.joined_at)}`;
    default:
      return `${t}:${str(d.id)}`;
  }
}
