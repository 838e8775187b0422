import type { MatrixClient } from "./client.ts";
import { MatrixHttpError } from "./client.ts";

/**
 * What the connector does with an invite, by the account's `autoJoin` (OpenClaw's default "off":
 * the bot joins nothing by itself). Every invite — a DM's too: it cannot be told from a room's
 * before joining — goes through this; `dm.policy` and the room allowlist apply to what is said
 * in the room after. "allowlist" joins a room listed by id (`!room:server`), by an alias that the
 * homeserver resolves to this room (`#alias:server`: the invite's own claims about the room are
 * not trusted), or `*`.
 */

export interface InvitePolicy {
  autoJoin: "off" | "allowlist" | "always";
  autoJoinAllowlist: string[];
}

export type InviteDecision = { join: true } | { join: false; reason: string };

export async function decideInvite(
  roomId: string,
  policy: InvitePolicy,
  client: MatrixClient,
  signal: AbortSignal,
): Promise<InviteDecision> {
  if (policy.autoJoin === "always") return { join: true };
  if (policy.autoJoin === "off") return { join: false, reason: "autoJoin is off" };
  for (const entry of policy.autoJoinAllowlist) {
    if (entry === "*" || entry === roomId) return { join: true };
    if (!entry.startsWith("#")) continue;
    try {
      const resolved = await client.call<{ room_id?: unknown }>(
        "GET",
        `/directory/room/${encodeURIComponent(entry)}`,
        { signal },
      );
      if (resolved.room_id === roomId) return { join: true };
    } catch (error) {
      // An alias that does not resolve admits nothing; anything else (the homeserver away) is retried.
      if (!(error instanceof MatrixHttpError && error.status === 404)) throw error;
    }
  }
  return { join: false, reason: "the room is not in autoJoinAllowlist" };
}

/** The inviter and whether the invite is for a DM, from the invite's stripped state. */
export function inviteFacts(
  invite: unknown,
  botUserId: string,
): { inviter?: string; isDirect: boolean } {
  const events = (invite as { invite_state?: { events?: unknown[] } } | undefined)?.invite_state
    ?.events;
  for (const event of Array.isArray(events) ? events : []) {
    const member = event as {
      type?: unknown;
      state_key?: unknown;
      sender?: unknown;
      content?: { membership?: unknown; is_direct?: unknown };
    };
    if (
      member.type === "m.room.member" &&
      member.state_key === botUserId &&
      member.content?.membership === "invite"
    )
      return {
        inviter: typeof member.sender === "string" ? member.sender : undefined,
        isDirect: member.content.is_direct === true,
      };
  }
  return { isDirect: false };
}
