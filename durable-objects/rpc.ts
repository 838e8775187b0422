import type { ProfileOutcome, ProfileUsage } from "../functions/agent/auth-profiles/cooldown.ts";
import type { BudgetWindow } from "../functions/agent/budget-scopes.ts";
import type { BudgetPeriod } from "../functions/agent/budget-periods.ts";
import type { SyncOutcome } from "../functions/agent/memory/index-signal.ts";
import type { ChannelStateEntry, ChannelStateReply } from "../functions/channels/channel-state.ts";
import type { MetricsShardApi } from "../functions/metrics/shards.ts";
import type { SandboxOpInput } from "../functions/sandbox/wire.ts";
import type { ContainerKeeperReport } from "./companion-keeper.ts";
import type { RelayAnswer, RelayState } from "./sandbox/relay.ts";
import type { DeviceLink } from "../functions/channels/companion/device-link.ts";

/**
 * What each Durable Object other than the SessionDO (session-api.ts) answers over RPC, and the
 * types its answers carry. The Env (env.ts) types every namespace with these interfaces and each
 * class implements its own, so the compiler holds the two together while neither the Env nor a
 * caller imports a Durable Object class: no type cycle runs through the Env.
 */

// ---- AuthLimiterDO (auth-limiter.ts) ----------------------------------------------------------

export interface AuthLimits {
  maxAttempts: number;
  windowMs: number;
  lockoutMs: number;
}

/**
 * `locked`: this attempt was refused because the bucket was already locked out. `retryAfterMs`: the
 * bucket is locked out for that long from now (also set by the failure that started the lockout,
 * which itself is answered as the wrong credential it was).
 */
export interface AuthVerdict {
  locked: boolean;
  retryAfterMs?: number;
}

export interface AuthLimiterRpc extends Rpc.DurableObjectBranded {
  admit(): Promise<AuthVerdict>;
  fail(limits: AuthLimits, context?: { bucket: string; path?: string }): Promise<AuthVerdict>;
}

// ---- AuthProfileStateDO (auth-profiles.ts) ---------------------------------------------------

export interface AuthProfileStateRpc extends Rpc.DurableObjectBranded {
  read(ids: string[]): Promise<Record<string, ProfileUsage>>;
  record(id: string, provider: string, outcome: ProfileOutcome): Promise<ProfileUsage>;
  list(): Promise<Record<string, ProfileUsage>>;
  reset(ids?: string[]): Promise<number>;
}

// ---- BudgetDO (budget.ts) ---------------------------------------------------------------------

export interface WindowState {
  period: BudgetPeriod;
  key: string;
  resetsAt: number;
  /** Effective caps: a raise stored here, else the config's. */
  limitUsd?: number;
  limitTokens?: number;
  spentUsd: number;
  spentTokens: number;
  reservedUsd: number;
  reservedTokens: number;
  /** Sandbox command time: the cap, finished commands' time, and what running ones used so far. */
  limitSandboxSeconds?: number;
  spentSandboxSeconds: number;
  runningSandboxSeconds: number;
  raised: boolean;
}

export interface SandboxAdmitArgs {
  /** The exec id (`<sessionId>:<toolCallId>`): admitting it again is not a new command. */
  id: string;
  windows: BudgetWindow[];
  now: number;
  /** Until when the run counts as running if its end is never charged (its timeout, plus slack). */
  holdUntil: number;
}

export interface SandboxChargeArgs {
  id: string;
  /** The command's wall time; 0 releases an admission whose command never started. */
  ms: number;
  now: number;
}

export type SandboxVerdict =
  | { ok: true }
  | {
      ok: false;
      period: BudgetPeriod;
      limitSeconds: number;
      usedSeconds: number;
      resetsAt: number;
      /** True for the first refusal in this period: the caller alerts the operator, once. */
      alert: boolean;
    };

export type ReserveVerdict =
  | { ok: true }
  /** The call's model has no price and this period caps USD: its cost cannot be counted. */
  | { ok: false; unpriced: true; period: BudgetPeriod; resetsAt: number }
  | {
      ok: false;
      period: BudgetPeriod;
      unit: "usd" | "tokens";
      limit: number;
      spent: number;
      resetsAt: number;
      /** True for the first refusal in this period: the caller alerts the operator, once. */
      alert: boolean;
      unpriced?: undefined;
    };

export interface WarnCrossing {
  period: BudgetPeriod;
  key: string;
  unit: "usd" | "tokens";
  limit: number;
  spent: number;
}

export interface ReserveArgs {
  id: string;
  windows: BudgetWindow[];
  usd: number;
  tokens: number;
  now: number;
  ttlMs: number;
  unpriced?: boolean;
}

export interface SettleArgs {
  id: string;
  windows: BudgetWindow[];
  usd: number;
  tokens: number;
  now: number;
}

export interface BudgetRpc extends Rpc.DurableObjectBranded {
  reserve(args: ReserveArgs): ReserveVerdict;
  settle(args: SettleArgs): WarnCrossing[];
  state(args: { windows: BudgetWindow[]; now: number }): WindowState[];
  raise(args: RaiseArgs): WindowState;
  reset(args: { window: BudgetWindow; now: number }): WindowState;
  admitSandbox(args: SandboxAdmitArgs): SandboxVerdict;
  chargeSandbox(args: SandboxChargeArgs): void;
}

export interface RaiseArgs {
  window: BudgetWindow;
  usd?: number;
  tokens?: number;
  sandboxSeconds?: number;
  now: number;
}

// ---- MetricsShardDO (metrics-shard.ts) --------------------------------------------------------

export interface MetricsShardRpc extends MetricsShardApi, Rpc.DurableObjectBranded {}

// ---- SchedulerDO (scheduler.ts) ---------------------------------------------------------------

/** A heartbeat's plan as the scheduler keeps it: its period and its next beat. */
export interface BeatState {
  everyMs: number;
  nextAt: number;
}

export interface SchedulerRpc extends Rpc.DurableObjectBranded {
  reschedule(): Promise<{ nextAlarmAt: number | null }>;
  ensureConfig(): Promise<void>;
  runNow(jobId: string): Promise<{ ok: true; runId: string } | { ok: false; error: string }>;
  wake(agentId: string, key: string): Promise<{ ok: boolean; reason?: string }>;
  status(): Promise<{ alarmAt: number | null; beats: Record<string, BeatState> }>;
}

// ---- MemoryIndexDO (memory-index.ts) ----------------------------------------------------------

export interface MemoryIndexRpc extends Rpc.DurableObjectBranded {
  touch(agentId: string): Promise<void>;
  sync(agentId: string, force: boolean): Promise<SyncOutcome>;
}

// ---- CompanionDO (companion.ts) and CompanionContainerDO (companion-container.ts) --------------

export type LeaseAnswer =
  | { ok: true; epoch: number; ttlMs: number }
  | { ok: false; holder: string; retryAfterMs: number };

export interface ConnectorReport {
  channel: string;
  accountId: string;
  state: string;
  lastEventAt?: number;
  lastError?: string;
  /** A device link (WhatsApp): state, QR code (text and module rows), pairing code, reason. */
  link?: DeviceLink;
}

export interface CompanionStatus {
  instance: string;
  leaseEpoch: number;
  /** Unix ms of the report. */
  reportedAt: number;
  /** Whether the instance still holds the lease now. */
  leaseHeld: boolean;
  connectors: ConnectorReport[];
}

export interface CompanionRpc extends Rpc.DurableObjectBranded {
  lease(instanceId: string, action: "acquire" | "renew" | "release", ttlMs: number): LeaseAnswer;
  getState(channel: string, accountId: string, key: string): string | null;
  putState(
    epoch: number,
    channel: string,
    accountId: string,
    key: string,
    value: string | null,
  ): boolean;
  getStates(channel: string, accountId: string, keys: string[]): Record<string, string | null>;
  putStates(
    epoch: number,
    channel: string,
    accountId: string,
    entries: Array<{ key: string; value: string | null }>,
  ): boolean;
  report(epoch: number, instanceId: string, connectors: ConnectorReport[]): boolean;
  status(): CompanionStatus | null;
  keepContainer(
    deployment: string,
    wanted: boolean,
    revision: string,
  ): Promise<ContainerKeeperReport>;
  containerStopped(exitCode: number, reason: string): Promise<ContainerKeeperReport>;
  resetContainer(): Promise<ContainerKeeperReport>;
  containerReport(): ContainerKeeperReport;
}

export interface CompanionContainerRpc extends Rpc.DurableObjectBranded {
  launch(deployment: string, vars: Record<string, string>): Promise<void>;
  halt(): Promise<void>;
}

// ---- ChannelStateDO (channel-state.ts) --------------------------------------------------------

/** functions/channels/channel-state.ts ChannelStateStore, branded: what channel code calls. */
export interface ChannelStateRpc extends Rpc.DurableObjectBranded {
  get(table: string, key: string): Promise<ChannelStateReply<unknown | null>>;
  list(table: string): Promise<ChannelStateReply<ChannelStateEntry[]>>;
  put(table: string, key: string, value: unknown): Promise<ChannelStateReply<null>>;
  delete(table: string, key: string): Promise<ChannelStateReply<boolean>>;
  replace(table: string, entries: ChannelStateEntry[]): Promise<ChannelStateReply<null>>;
}

// ---- SandboxDO (sandbox.ts) -------------------------------------------------------------------

export interface SandboxRpc extends Rpc.DurableObjectBranded {
  /** One sandbox protocol request (functions/sandbox/wire.ts) and the host's answer. */
  sandbox(op: SandboxOpInput): Promise<RelayAnswer>;
  /** What the control page, `sessions show` and `edgeclaw status` say about this scope's sandbox. */
  describe(): Promise<SandboxDescription>;
}

export type SandboxDescription = RelayState & {
  sleepAfter: string;
  /** Commands the current container runs (or ran) whose end no session has been told yet. */
  commands: Array<{ execId: string; startedAt: number; timeoutSeconds: number }>;
};
