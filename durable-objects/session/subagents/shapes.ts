import type { ReplyRoute } from "../../../functions/core/envelope.ts";
import type { OutboundFileRef } from "../../../functions/media/outbound.ts";
import type { ChildView } from "../../../functions/agent/tools/session-tools-host.ts";

/**
 * What the SessionDO keeps about sub-agents (meta keys `subagentChildren`, `subagentParent`,
 * `subagentAnnounces`; owners: spawn.ts, triage.ts, announce.ts in this folder). Shapes only, so
 * meta.ts can name them without importing the code that writes them.
 */

/** The person a child works for: its model calls count against their sender budget. */
export interface OnBehalfOf {
  channel: string;
  senderId: string;
}

/** How a child's run ended, from the runtime (never read from the model's text). */
export type SubagentOutcome = "ok" | "error" | "timeout" | "aborted";

/** A child, as its parent keeps it (`subagentChildren`, newest last). */
export interface SubagentChild {
  childKey: string;
  /** The derived uuid (also the spawn's runId in the tool result). */
  uuid: string;
  callId: string;
  parentRunId: string;
  agentId: string;
  task: string;
  label?: string;
  taskName?: string;
  /** starting: recorded, the child's accept not yet confirmed; running: the child has its task; ended: it reported. */
  state: "starting" | "running" | "ended";
  outcome?: SubagentOutcome;
  /** The child's last visible reply (ok) or why it failed (bounded). */
  result?: string;
  createdAt: number;
  endedAt?: number;
  stats?: SubagentStats;
  /** /subagents kill: the kill was asked for (the child still reports its end). */
  killRequested?: boolean;
  /** sessions_spawn context "fork": the task carries the parent's conversation (fork.ts). */
  context?: "fork";
}

export interface SubagentStats {
  runtimeMs: number;
  inputTokens: number;
  outputTokens: number;
  modelRef?: string;
}

/** Who spawned this session (`subagentParent`, set when the task arrives). */
export interface SubagentParent {
  parentKey: string;
  parentAgentId: string;
  childKey: string;
  uuid: string;
  depth: number;
  senderIsOwner: boolean;
  onBehalfOf?: OnBehalfOf;
  label?: string;
  taskName?: string;
  /** Where the spawning run answered: the parent's turn on the child's report answers there too. */
  requesterRoute: ReplyRoute;
}

/** The report a child hands its parent, once per child run. */
export interface SubagentReport {
  childKey: string;
  uuid: string;
  childRunId: string;
  outcome: SubagentOutcome;
  result: string;
  stats: SubagentStats;
  label?: string;
  taskName?: string;
  senderIsOwner: boolean;
  onBehalfOf?: OnBehalfOf;
  requesterRoute: ReplyRoute;
}

/** A report not yet stored by the parent (`subagentAnnounces`): retried until it is. */
export interface PendingAnnounce {
  parentKey: string;
  parentAgentId: string;
  report: SubagentReport;
  attempts: number;
  nextAt: number;
  firstAt: number;
  lastError?: string;
}

/** What one `message` send hands the target session (SessionApi.postMessage). */
export interface PostedMessage {
  /** `message:<from>:<run>:<call>`: the outbox rows' id prefix, so a repeat records nothing new. */
  id: string;
  text?: string;
  files?: OutboundFileRef[];
  /** `tools.message.targets: "owner"`: refused unless this conversation is the owner's direct chat. */
  ownerOnly?: boolean;
  /** The channel the sender named: the conversation's route must be on it. */
  channel?: string;
}

export type PostAnswer = { ok: true; channel: string } | { ok: false; error: string };

/** A child on the control page (SessionApi.subagents): the tools' view plus its token use. */
export interface SubagentAdminRow extends ChildView {
  inputTokens?: number;
  outputTokens?: number;
  modelRef?: string;
  killRequested?: boolean;
}

/** How one sessions_send message stands in its target (SessionApi.sentReply). */
export interface SentReply {
  settled: boolean;
  /** The visible reply it got ("" for a silent one). */
  reply?: string;
  /** Dead-lettered: why it got no answer. */
  failed?: string;
}
