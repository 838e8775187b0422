import type { Env } from "../../workers/env.ts";
import type { EdgeclawConfig } from "../../functions/config/schema.ts";
import type { RunEvent } from "../session-api.ts";
import type { SessionSettings } from "../session.ts";
import { HTTP_CHANNELS } from "../../functions/channels/registry.ts";
import { decideAccess, OPERATOR_ACCESS, type AccessDecision } from "../../functions/routing/access.ts";
import { postgresAccessStore } from "../../functions/routing/access-store-postgres.ts";
import { withDb } from "../../functions/db/client.ts";
import type { InboxRow, SessionStore } from "./storage.ts";

/** What triage may do to its session. SessionDO implements it. */
export interface TriageHost {
  env: Env;
  config: EdgeclawConfig;
  store: SessionStore;
  activeRun: { runId: string } | null;
  settings(): SessionSettings;
  updateSettings(patch: Partial<SessionSettings>): SessionSettings;
  rotateSession(): string;
  sessionFacts(): SessionFacts;
  abortActiveRun(reason: string): void;
  notice(row: InboxRow, text: string): void;
  emit(seq: number, event: RunEvent): void;
  progressAccepted(row: InboxRow): Promise<void>;
  compact(instructions?: string): Promise<string>;
}

export interface SessionFacts {
  sessionKey: string;
  agentId: string;
  sessionId: string;
  sessionStartedAt: number;
  lastInteractionAt: number | null;
  inputTokens: number;
  outputTokens: number;
  runs: number;
  compactions: number;
  activeRunId: string | null;
  queued: number;
  settings: SessionSettings;
}

/**
 * Decides what a newly accepted event becomes: dropped, answered without the model (pairing code,
 * command), kept as group context, or queued for a run — and applies the queue mode when a run is
 * already active (steer waits for the next boundary, interrupt aborts the run, cap/drop bound the
 * queue). Runs inside the SessionDO, after the ack, so it may read Postgres.
 */
export async function triageInbound(row: InboxRow, host: TriageHost): Promise<void> {
  const { envelope } = row.event;
  const decision = await accessFor(row, host);
  const now = Date.now();
  switch (decision.kind) {
    case "drop":
      host.store.settleInbox(row.seq, null, now);
      host.emit(row.seq, { type: "error", code: "dropped", message: decision.reason });
      return;
    case "pairing":
      host.notice(row, decision.replyText);
      return;
    case "history-only":
      host.store.pushGroupHistory(envelope.senderName ?? envelope.senderId, envelope.text, envelope.receivedAt, historyLimit(host.config, envelope.channel));
      host.store.settleInbox(row.seq, null, now);
      host.emit(row.seq, { type: "error", code: "history-only", message: "kept as group context (no mention)" });
      return;
    case "allow":
      break;
  }

  const text = labelForGroup(envelope.chatType, envelope.senderName ?? envelope.senderId, envelope.kind === "system" ? `System: ${envelope.text}` : envelope.text);
  host.store.prepareInbox(row.seq, {
    text,
    senderIsOwner: decision.senderIsOwner,
    queuedBehindRun: host.activeRun !== null,
  });
  host.store.setJson("lastRoute", envelope.route);
  host.store.setMeta("chatType", envelope.chatType);
  await host.progressAccepted(row);
  if (host.activeRun) applyQueueMode(row, host);
}

async function accessFor(row: InboxRow, host: TriageHost): Promise<AccessDecision> {
  const { envelope, agentId } = row.event;
  // Web chat and the OpenAI API are authenticated by the gateway token: the caller is the operator.
  if (HTTP_CHANNELS.has(envelope.channel)) return OPERATOR_ACCESS;
  return withDb(host.env, (db) =>
    decideAccess({ config: host.config, envelope, store: postgresAccessStore(db), now: Date.now(), agentId }),
  );
}

/** In group chats the model needs to know who spoke; DMs need no label. */
function labelForGroup(chatType: string, sender: string, text: string): string {
  return chatType === "direct" ? text : `${sender}: ${text}`;
}

function historyLimit(config: EdgeclawConfig, channel: string): number {
  const channelBlock = config.channels[channel] as { historyLimit?: number } | undefined;
  const groupChat = (config.messages as { groupChat?: { historyLimit?: number } }).groupChat;
  return channelBlock?.historyLimit ?? groupChat?.historyLimit ?? 50;
}

/** A message that arrived while a run is active: interrupt, or bound the queue per cap/drop. */
function applyQueueMode(row: InboxRow, host: TriageHost): void {
  const channel = row.event.envelope.channel;
  const queue = host.config.messages.queue;
  const settings = host.settings().queue ?? {};
  const mode = settings.mode ?? queue.byChannel[channel] ?? queue.mode;
  if (mode === "interrupt") {
    host.abortActiveRun("interrupted by a newer message (queue mode interrupt)");
    return;
  }
  const cap = settings.cap ?? queue.cap;
  if (cap < 1) return;
  const drop = settings.drop ?? queue.drop;
  const queued = host.store.inboxByState("queued");
  if (queued.length <= cap) return;
  const now = Date.now();
  const victims = drop === "new" ? [row] : queued.slice(0, queued.length - cap);
  const summary = host.store.getJson<string[]>("droppedSummary") ?? [];
  for (const victim of victims) {
    host.store.settleInbox(victim.seq, null, now);
    host.emit(victim.seq, { type: "error", code: "queue_full", message: `dropped: more than ${cap} messages queued (messages.queue.cap)` });
    if (drop === "summarize") summary.push(summarizeLine(victim));
  }
  if (drop === "summarize") host.store.setJson("droppedSummary", summary.slice(-cap));
}

function summarizeLine(row: InboxRow): string {
  const text = (row.prepared?.text ?? row.event.envelope.text).replace(/\s+/g, " ").trim();
  return text.length > 160 ? `${text.slice(0, 157)}…` : text;
}
