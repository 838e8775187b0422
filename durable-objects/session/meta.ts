import type { ReplyRoute } from "../../functions/core/envelope.ts";
import type { CronRunReport } from "../../functions/automation/cron-store.ts";
import type { SessionCapture } from "../../functions/agent/memory/session-capture.ts";
import type {
  SessionSettings,
  SessionSpendView,
} from "../../functions/commands/session-control.ts";
import type { Delta } from "../../functions/metrics/catalog.ts";
import type { HistoryEntry } from "../session-api.ts";
import type { OutboundFileRef } from "../../functions/media/outbound.ts";
import type { PendingAnnounce, SubagentChild, SubagentParent } from "./subagents/shapes.ts";
import type { PruneDecisions } from "../../functions/agent/context-pruning.ts";

// ---- The shapes of the JSON values (each owned by the file named beside its key below) ---------

/**
 * `spend:<id>` (mirror/model-calls.ts): what the session's model calls cost so far — the view
 * `/usage` shows, as stored: the platform estimate (platform-cost.ts) only once a run finished.
 */
export type SessionSpend = Omit<SessionSpendView, "platformUsd" | "sandbox"> & {
  platformUsd?: number;
};

/** `sandboxUsage:<id>` (exec-report.ts): the session's finished sandbox commands and their wall time. */
export interface SandboxUsage {
  commands: number;
  ms: number;
  /** The part that ran in a Cloudflare Container (the companion's is not billed here). */
  containerMs: number;
}

/** One entry of `sandboxCharges` (exec-budget.ts): a finished command's time not yet charged to its budget scopes. */
export interface PendingSandboxCharge {
  id: string;
  scopes: string[];
  ms: number;
}

/** `foldedRuns:<id>` (run/runs-store.ts): usage of the current session's runs that were folded away (sessionTotals adds it to the live ones). */
export interface FoldedRuns {
  inputTokens: number;
  outputTokens: number;
  runs: number;
  /** Their estimated platform cost (runs.platform_usd, schema step 12). */
  platformUsd?: number;
}

/** `mirrorWatermark` (mirror/watermark.ts): every row the Postgres mirror has copied. */
export interface MirrorWatermark {
  /** Every transcript row up to this seq. */
  transcriptSeq: number;
  /** Every finished run whose mirror_stamp is at most this. */
  runStamp: number;
  /** Every model call whose mirror_stamp is at most this. */
  callStamp: number;
}

/** One entry of `systemEvents` (inbox/system-events.ts): context waiting for the next run. */
export interface QueuedSystemEvent {
  text: string;
  /** Unix ms at which the gateway received the event. */
  at: number;
}

/** A turn of the display log (outbox/display-log.ts). */
export type DisplayTurn = Omit<HistoryEntry, "model" | "media"> & {
  /** The web chat's files of an answer, signed afresh each time the history is read. */
  files?: OutboundFileRef[];
};

/** `displayLog` (outbox/display-log.ts): the current session's display turns. */
export interface DisplayLog {
  sessionId: string;
  turns: DisplayTurn[];
}

/**
 * Every key the SessionDO keeps in its `meta` table, with its value type and its owner: the one
 * list (a key that is not here does not type-check). Text values are stored as written; JSON
 * values are stored as JSON. Keys with a `:<id>` tail are per session (or per inbox event) and
 * are pruned with it (retention.ts asks `MetaStore.prune`).
 */
export interface MetaText {
  /** schema.ts: the migration step this object has reached. */
  schemaVersion: string;
  /** session.ts accept: the routing key and agent this object serves (set on the first event). */
  sessionKey: string;
  agentId: string;
  /** lifecycle.ts: the current session id and when it started. */
  sessionId: string;
  sessionStartedAt: string;
  /** Before lastInbound (last-inbound.ts): the last interaction, read as a floor where it exists. */
  lastInteractionAt: string;
  /** inbox/triage.ts: direct | group, from the last event (status, queue policy). */
  chatType: string;
  /** retry.ts: a transient failure parks triage/run setup until then (epoch ms). */
  retryAt: string;
  /** mirror/mirror.ts: the Postgres mirror failed; try again from then (epoch ms). */
  mirrorRetryAt: string;
  /** upkeep/retention.ts: when the sweep last ran (epoch ms). */
  prunedAt: string;
  /** run/compact.ts: how often the current session was compacted. */
  compactions: string;
  /** run/bounds.ts: the run parked at the end of its slice (a resume is not a crash). */
  parkedRun: string;
  /** run/session-memory.ts: the session whose first run gets the startup context. */
  startupContextSession: string;
  /**
   * inbox/store.ts, run/transcript-store.ts: the highest seq the table ever held when its newest
   * rows are gone (step 14 dropped AUTOINCREMENT; a new row takes the next seq above both it and
   * the rows left, so a seq is never given twice). Written only when the newest row is deleted.
   */
  inboxSeqFloor: string;
  transcriptSeqFloor: string;
  /**
   * run/transcript-store.ts: every transcript row of the current session is above this seq
   * (written when a session starts; schema step 17 dropped the (session_id, seq) index).
   */
  transcriptSessionFloor: string;
  /** upkeep/metrics.ts: the queue depth reported so far. */
  metricsQueueDepth: string;
  /** run/compact.ts: the summary that replaces the compacted part of a session's transcript. */
  [summary: `summary:${string}`]: string;
  /** run/memory-flush.ts: the compaction cycle whose memory flush already ran. */
  [cycle: `memoryFlushCycle:${string}`]: string;
}

export interface MetaJson {
  /**
   * last-inbound.ts: where the last accepted message came from (heartbeats, status) and when a
   * person last wrote in the current session (idle resets), as of the inbox event `seq` (newer
   * events carry it themselves). Written by the sweep before it clears that event's payload and
   * when a session starts; before that cut, by triage with every message (no seq).
   */
  lastInbound: { route: ReplyRoute; userAt?: number; seq?: number };
  /** Before lastInbound: the last accepted message's route (read where lastInbound is absent). */
  lastRoute: ReplyRoute;
  /** lifecycle settings (/model, /think, /queue, …). */
  settings: SessionSettings;
  /** inbox/queue-mode.ts: one-line summaries of messages the queue cap dropped. */
  droppedSummary: string[];
  /** inbox/triage-access.ts: the last refusal reason logged (a repeat is not logged again). */
  refusalLogged: string;
  /** inbox/system-events.ts: events waiting for the next run's prompt. */
  systemEvents: QueuedSystemEvent[];
  /** inbox/automation.ts: cron outcomes waiting for the heartbeat's report. */
  cronReports: CronRunReport[];
  /** outbox/display-log.ts: command turns and notices for the web chat. */
  displayLog: DisplayLog;
  /** run/session-memory.ts: captures of ended sessions not yet saved to memory. */
  sessionMemoryPending: SessionCapture[];
  /** upkeep/metrics.ts: the batch handed to the shard and not yet acknowledged. */
  metricsBatch: { no: number; deltas: Delta[]; at?: number };
  /**
   * upkeep/metrics.ts: the last batch the shard acknowledged, and when (schema steps 10–13; no
   * longer written — the last batch is kept in memory — but read as a floor where it exists).
   */
  metricsFlushed: { no: number; at: number };
  /** exec-budget.ts: finished commands' time the budget scopes have not confirmed yet. */
  sandboxCharges: PendingSandboxCharge[];
  /** upkeep/metrics-store.ts: series → value counted since the last batch (schema step 9). */
  metricsPending: Record<string, number>;
  /**
   * mirror/watermark.ts: what the Postgres mirror has copied (schema step 18; before it, the
   * transcript's part was text key transcriptMirroredSeq and each run and call had a flag),
   * written by the sweep from step 20 (each run's end carries it too: runs.mirror_mark).
   */
  mirrorWatermark: MirrorWatermark;
  /** subagents/spawn.ts: the children this session spawned (active ones and recently ended ones). */
  subagentChildren: SubagentChild[];
  /** subagents/triage.ts: this session is a child: who spawned it. */
  subagentParent: SubagentParent;
  /** run/auth-profiles.ts: the auth profile this session sticks to per provider, for one session and compaction cycle. */
  authPins: { sessionId: string; compactions: number; byProvider: Record<string, string> };
  /** subagents/announce.ts: reports to the parent not yet stored there. */
  subagentAnnounces: PendingAnnounce[];
  /**
   * mirror/model-calls.ts: a session's spend of calls no longer in model_calls (folded in by the
   * sweep; before schema step 16 written with each call); the calls still there are summed to it.
   */
  [spend: `spend:${string}`]: SessionSpend;
  /** exec-report.ts: a session's sandbox time, added once per finished command. */
  [sandbox: `sandboxUsage:${string}`]: SandboxUsage;
  /** run/runs-store.ts: usage of a session's runs folded away by the sweep. */
  [folded: `foldedRuns:${string}`]: FoldedRuns;
  /** run/pruning.ts: which old tool results the model is sent trimmed or cleared (session pruning). */
  [pruning: `pruning:${string}`]: PruneDecisions;
  /** outbox/progress.ts: the ack-progress state of an event not yet settled. */
  [progress: `progress:${number}`]: Record<string, string>;
}

export type MetaTextKey = keyof MetaText & string;
export type MetaJsonKey = keyof MetaJson & string;

/** Per-session keys the sweep keeps only for the current session. */
const PER_SESSION_PREFIXES = [
  "summary:",
  "foldedRuns:",
  "spend:",
  "sandboxUsage:",
  "pruning:",
] as const;

/** The `meta` table's one owner. */
export class MetaStore {
  constructor(private readonly sql: SqlStorage) {}

  /** The stored text (a JSON key's raw JSON). */
  get(key: MetaTextKey | MetaJsonKey): string | undefined {
    const row = this.sql
      .exec<{ value: string }>(`SELECT value FROM meta WHERE key = ?`, key)
      .toArray()[0];
    return row?.value;
  }
  set(key: MetaTextKey, value: string): void {
    this.write(key, value);
  }
  getJson<K extends MetaJsonKey>(key: K): MetaJson[K] | undefined {
    const raw = this.get(key);
    return raw === undefined ? undefined : (JSON.parse(raw) as MetaJson[K]);
  }
  setJson<K extends MetaJsonKey>(key: K, value: MetaJson[K]): void {
    this.write(key, JSON.stringify(value));
  }
  delete(key: MetaTextKey | MetaJsonKey): void {
    this.sql.exec(`DELETE FROM meta WHERE key = ?`, key);
  }

  /**
   * Drops what belongs to sessions other than `activeSessionId` and the progress state of events
   * that are settled (`liveSeqs`: the inbox's unsettled events).
   */
  prune(activeSessionId: string, liveSeqs: readonly number[]): void {
    // One LIKE and one kept key per prefix, from the one list: a prefix added there is swept too.
    const keep = PER_SESSION_PREFIXES.map((prefix) => `${prefix}${activeSessionId}`);
    const matches = PER_SESSION_PREFIXES.map(() => "key LIKE ?").join(" OR ");
    this.sql.exec(
      `DELETE FROM meta WHERE (${matches}) AND key NOT IN (${keep.map(() => "?").join(", ")})`,
      ...PER_SESSION_PREFIXES.map((prefix) => `${prefix}%`),
      ...keep,
    );
    const live = new Set(liveSeqs);
    const progress = this.sql
      .exec<{ key: string }>(`SELECT key FROM meta WHERE key LIKE 'progress:%'`)
      .toArray();
    for (const { key } of progress) {
      if (!live.has(Number(key.slice("progress:".length))))
        this.sql.exec(`DELETE FROM meta WHERE key = ?`, key);
    }
  }

  /**
   * Upserts, unless the stored value is already this one: rows written are billed and a read is
   * not (most messages leave chatType, lastRoute, settings … as they were).
   */
  private write(key: string, value: string): void {
    if (this.get(key as MetaTextKey) === value) return;
    this.sql.exec(
      `INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`,
      key,
      value,
    );
  }
}
