import type {
  HistoryAnswer,
  SessionListAnswer,
  SessionListRow,
} from "../../../functions/agent/tools/session-tools-host.ts";
import { searchSessions } from "../../../functions/control/session-search.ts";
import { withDb } from "../../../functions/db/client.ts";
import { inboundEnvelopeSchema } from "../../../functions/core/envelope.ts";
import {
  AUTOMATION_CHANNEL,
  isOperatorChannel,
} from "../../../functions/core/operator-channels.ts";
import { describeError } from "../../../functions/core/describe-error.ts";
import { Redactor } from "../../../functions/logging/redact.ts";
import type { SessionState } from "../state.ts";
import { childrenOf } from "./children.ts";
import type { Spawner } from "./spawn.ts";
import type { SentReply } from "./shapes.ts";
import { lastRoute } from "../last-inbound.ts";

/**
 * sessions_list / sessions_history / sessions_send inside the calling session. What a caller may
 * reach is `tools.sessions.visibility` (self: itself; tree: itself and the children it spawned;
 * agent: every session of its agent; all: every session), narrowed by the privacy rules already in
 * force for memory: a run that is not the owner's reaches only its own tree (a stranger's session
 * never lists or reads the owner's), and only the owner's private chat (their DM, the web chat, the
 * API) reaches other direct chats — a group, a channel or a child never reads a DM.
 */
interface Scope {
  mode: "self" | "tree" | "agent" | "all";
  ownKey: string;
  agentId: string;
  tree: Set<string>;
  privateCaller: boolean;
  restricted?: string;
}

function scopeOf(s: SessionState, caller: Spawner): Scope {
  const ownKey = s.store.meta.get("sessionKey") ?? "";
  const agentId = s.store.meta.get("agentId") ?? "main";
  const configured = s.config.tools.sessions.visibility;
  const tree = new Set([ownKey, ...childrenOf(s.store).map((child) => child.childKey)]);
  const privateCaller =
    caller.senderIsOwner &&
    (s.store.meta.get("chatType") === "direct" || isOperatorChannel(caller.route.channel)) &&
    !s.store.meta.getJson("subagentParent");
  if (!caller.senderIsOwner && (configured === "agent" || configured === "all"))
    return {
      mode: "tree",
      ownKey,
      agentId,
      tree,
      privateCaller,
      restricted: "this run is not the owner's: only this session and its sub-agents are visible",
    };
  return { mode: configured, ownKey, agentId, tree, privateCaller };
}

interface IndexRow {
  sessionKey: string;
  agentId: string;
  channel: string | null;
  chatType: string | null;
  updatedAt: Date;
}

function visible(scope: Scope, row: IndexRow): boolean {
  if (row.sessionKey === scope.ownKey) return true;
  if (scope.mode === "self") return false;
  const inTree = scope.tree.has(row.sessionKey);
  if (!inTree) {
    if (scope.mode === "tree") return false;
    if (scope.mode === "agent" && row.agentId !== scope.agentId) return false;
  }
  // Private conversations reach only the owner's own private chat.
  if (row.chatType === "direct" && !inTree && !scope.privateCaller) return false;
  return true;
}

function kindOf(row: { sessionKey: string; chatType: string | null }): string {
  if (row.sessionKey.includes(":subagent:")) return "subagent";
  if (row.sessionKey.includes(":cron:")) return "cron";
  if (row.sessionKey.includes(":hook:")) return "hook";
  if (row.chatType === "group" || row.chatType === "channel") return "group";
  if (row.sessionKey.endsWith(":main")) return "main";
  return "other";
}

function parentKeyOf(key: string): string | undefined {
  const at = key.lastIndexOf(":subagent:");
  return at > 0 && key.slice(0, at).includes(":subagent:") ? key.slice(0, at) : undefined;
}

async function indexRows(s: SessionState, scope: Scope, limit: number): Promise<IndexRow[]> {
  if (scope.mode === "self" || scope.mode === "tree") {
    // Its own tree is known here; the index may not have mirrored a new child yet.
    const now = new Date();
    return [...scope.tree].map((sessionKey) => ({
      sessionKey,
      agentId:
        childrenOf(s.store).find((child) => child.childKey === sessionKey)?.agentId ??
        scope.agentId,
      channel: sessionKey === scope.ownKey ? (lastRoute(s.store)?.channel ?? null) : null,
      chatType: sessionKey === scope.ownKey ? (s.store.meta.get("chatType") ?? null) : null,
      updatedAt: now,
    }));
  }
  return withDb(s.env, (db) =>
    searchSessions(db, {
      ...(scope.mode === "agent" ? { agentId: scope.agentId } : {}),
      limit: Math.min(500, limit * 4),
    }),
  );
}

export async function listSessions(
  s: SessionState,
  caller: Spawner,
  filter: { kinds?: string[]; limit: number; activeMinutes?: number },
): Promise<SessionListAnswer> {
  const scope = scopeOf(s, caller);
  const since = filter.activeMinutes ? Date.now() - filter.activeMinutes * 60_000 : 0;
  const rows: SessionListRow[] = (await indexRows(s, scope, filter.limit))
    .filter((row) => visible(scope, row))
    .filter((row) => row.updatedAt.getTime() >= since)
    .map((row) => {
      const parent =
        parentKeyOf(row.sessionKey) ??
        (scope.tree.has(row.sessionKey) && row.sessionKey !== scope.ownKey
          ? scope.ownKey
          : undefined);
      return {
        sessionKey: row.sessionKey,
        agentId: row.agentId,
        kind: kindOf(row),
        ...(row.channel ? { channel: row.channel } : {}),
        ...(row.chatType ? { chatType: row.chatType } : {}),
        updatedAt: row.updatedAt.toISOString(),
        ...(parent ? { parentSessionKey: parent } : {}),
      };
    })
    .filter((row) => !filter.kinds?.length || filter.kinds.includes(row.kind))
    .slice(0, filter.limit);
  return {
    sessions: rows,
    visibility: { mode: scope.mode, ...(scope.restricted ? { restricted: scope.restricted } : {}) },
  };
}

/** The target's index row, if the caller may reach it. */
async function reachable(s: SessionState, scope: Scope, key: string): Promise<boolean> {
  if (key === scope.ownKey || scope.tree.has(key))
    return scope.mode !== "self" || key === scope.ownKey;
  if (scope.mode === "self" || scope.mode === "tree") return false;
  const rows = await withDb(s.env, (db) => searchSessions(db, { query: key, limit: 20 }));
  const row = rows.find((candidate) => candidate.sessionKey === key);
  return row !== undefined && visible(scope, row);
}

/** Whether `caller` may reach the session `key` (the message tool's target check). */
export async function reachableSession(
  s: SessionState,
  caller: Spawner,
  key: string,
): Promise<boolean> {
  return reachable(s, scopeOf(s, caller), key);
}

const NOT_VISIBLE = (key: string) =>
  `session ${key} does not exist or is not visible from here (tools.sessions.visibility)`;
const HISTORY_CHARS = 4_000;
const HISTORY_BYTES = 80_000;

export async function historyOf(
  s: SessionState,
  caller: Spawner,
  key: string,
  limit: number,
): Promise<HistoryAnswer | { error: string }> {
  const scope = scopeOf(s, caller);
  if (!(await reachable(s, scope, key))) return { error: NOT_VISIBLE(key) };
  const entries = await s.env.SESSIONS.get(s.env.SESSIONS.idFromName(key)).history(limit);
  const redactor = new Redactor({ secrets: [], extraPatterns: [], redactSensitive: "off" });
  let redacted = false;
  let truncated = false;
  let bytes = 0;
  const messages: HistoryAnswer["messages"] = [];
  for (const entry of [...entries].reverse()) {
    let text = redactor.string(entry.text);
    if (text !== entry.text) redacted = true;
    if (text.length > HISTORY_CHARS) {
      text = `${text.slice(0, HISTORY_CHARS)}… [truncated]`;
      truncated = true;
    }
    bytes += text.length;
    if (bytes > HISTORY_BYTES) {
      truncated = true;
      break;
    }
    messages.unshift({ role: entry.role, text, at: new Date(entry.at).toISOString() });
  }
  return { sessionKey: key, messages, truncated, contentRedacted: redacted };
}

/**
 * Starts a turn in another visible session (fire and forget: this object never waits on it). The
 * message is that session's next event, keyed by this run and tool call (a resumed run stores it
 * once), marked as inter-session data; the target answers in its own conversation.
 */
export async function sendToSession(
  s: SessionState,
  caller: Spawner,
  key: string,
  message: string,
  toolCallId: string,
  timeoutSeconds = 0,
): Promise<string> {
  const scope = scopeOf(s, caller);
  if (key === scope.ownKey) return "sessions_send cannot target this session itself";
  if (key.includes(":thread:"))
    return "a thread session is not a sessions_send target: use its parent session";
  if (!(await reachable(s, scope, key))) return NOT_VISIBLE(key);
  const agentId =
    childrenOf(s.store).find((child) => child.childKey === key)?.agentId ??
    agentIdOf(key, scope.agentId);
  const dedupKey = `session-send:${scope.ownKey}:${caller.runId}:${toolCallId}`;
  try {
    const stub = s.env.SESSIONS.get(s.env.SESSIONS.idFromName(key));
    const answer = await stub.accept({
      agentId,
      sessionKey: key,
      envelope: inboundEnvelopeSchema.parse({
        dedupKey,
        channel: AUTOMATION_CHANNEL,
        chatType: "direct",
        peerId: "session",
        senderId: "session",
        text: message,
        receivedAt: Date.now(),
        route: { channel: AUTOMATION_CHANNEL, accountId: "default", to: "session" },
      }),
      automation: {
        source: "subagent",
        action: "agent-turn",
        subagent: { kind: "message", fromKey: scope.ownKey, senderIsOwner: caller.senderIsOwner },
        ...(caller.onBehalfOf ? { onBehalfOf: caller.onBehalfOf } : {}),
      },
    });
    const status = answer.status === "duplicate" ? "already-sent" : "sent";
    if (timeoutSeconds <= 0) return JSON.stringify({ status, sessionKey: key });
    return JSON.stringify({
      ...(await awaitReply(stub, dedupKey, timeoutSeconds)),
      sessionKey: key,
    });
  } catch (error) {
    return `sessions_send failed: ${describeError(error)}`;
  }
}

function agentIdOf(key: string, fallback: string): string {
  const match = /^agent:([^:]+):/.exec(key);
  return match?.[1] ?? fallback;
}

const REPLY_POLL_MS = 500;

/**
 * Waits for the target's answer to one sessions_send: its inbox row for that dedup key settles with
 * the visible reply. Asked every half second (a Durable Object holds no callback into another), up
 * to `timeoutSeconds`; nothing is stored here, so a run resumed after a crash simply waits again.
 */
async function awaitReply(
  stub: { sentReply(dedupKey: string): Promise<SentReply | null> },
  dedupKey: string,
  timeoutSeconds: number,
): Promise<{ status: "ok"; reply: string } | { status: "timeout" | "error"; error: string }> {
  const end = Date.now() + timeoutSeconds * 1000;
  for (;;) {
    const state = await stub.sentReply(dedupKey);
    if (state?.failed) return { status: "error", error: state.failed };
    if (state?.settled) return { status: "ok", reply: state.reply ?? "" };
    if (Date.now() + REPLY_POLL_MS > end)
      return {
        status: "timeout",
        error: `no reply within ${timeoutSeconds} s; it still comes, in that session`,
      };
    await new Promise((resolve) => setTimeout(resolve, REPLY_POLL_MS));
  }
}
