import type { AuthLimiterDO } from "./auth-limiter.ts";
import type { BudgetDO } from "./budget.ts";
import type { SessionDO } from "./session.ts";
import type { MetricsShardDO } from "./metrics-shard.ts";
import type { SchedulerDO } from "./scheduler.ts";
import type { MemoryIndexDO } from "./memory-index.ts";
import type { CompanionDO } from "./companion.ts";
import type { CompanionContainerDO } from "./companion-container.ts";
import type { CommandRegistryDO } from "./command-registry.ts";
import type { SandboxDO } from "./sandbox.ts";

/** Bindings and secrets the Worker and its Durable Objects receive from wrangler. */
export interface Env {
  SESSIONS: DurableObjectNamespace<SessionDO>;
  /** Failed gateway-auth counters, one object per client address bucket (workers/gateway-auth.ts). */
  AUTH_LIMITER: DurableObjectNamespace<AuthLimiterDO>;
  /** Durable counters behind GET /metrics, a fixed set of shards (functions/metrics/shards.ts). */
  METRICS: DurableObjectNamespace<MetricsShardDO>;
  /** Spend counters and reservations, one object per budget scope (durable-objects/budget.ts). */
  BUDGETS: DurableObjectNamespace<BudgetDO>;
  /** The one scheduler of cron jobs and heartbeats (durable-objects/scheduler.ts), named "global". */
  SCHEDULER: DurableObjectNamespace<SchedulerDO>;
  /** One memory index keeper per agent (durable-objects/memory-index.ts): debounced reindex after writes. */
  MEMORY_INDEX: DurableObjectNamespace<MemoryIndexDO>;
  /** One per companion deployment (durable-objects/companion.ts): lease + epoch, connector state, last status. */
  COMPANION: DurableObjectNamespace<CompanionDO>;
  /** One per companion deployment (durable-objects/companion-container.ts): the Cloudflare Container running the companion. */
  COMPANION_CONTAINER: DurableObjectNamespace<CompanionContainerDO>;
  /** "1" when `npm run deploy` added the companion container (socket accounts configured), "0" when it did not; unset in dev and tests. */
  EDGECLAW_COMPANION_CONTAINER?: string;
  /** Native slash commands a channel account registered, with their callback tokens (durable-objects/command-registry.ts), one per `<channel>:<accountId>`. */
  COMMAND_REGISTRY: DurableObjectNamespace<CommandRegistryDO>;
  /** One per sandbox scope (durable-objects/sandbox.ts): the Cloudflare Container the agent's commands run in. */
  SANDBOX: DurableObjectNamespace<SandboxDO>;
  /** "1" when `npm run deploy` added the sandbox container (an agent's sandbox backend is "container"), "0" when not; unset in dev. */
  EDGECLAW_SANDBOX_CONTAINER?: string;
  /** Tests only: the loopback container engine standing in for the Containers runtime (durable-objects/sandbox/loopback-container.ts). */
  EDGECLAW_LOOPBACK_CONTAINERS?: string;
  /** Postgres connection string (Neon in production, the local bridge in dev and tests). */
  DATABASE_URL?: string;
  /** Set only locally: the host:port of the WebSocket-to-TCP bridge in front of PGlite. */
  EDGECLAW_PG_WS_PROXY?: string;
  /** The config file as JSON; the deploy and dev scripts fill it from edgeclaw.json5. */
  EDGECLAW_CONFIG?: string;
  EDGECLAW_GATEWAY_TOKEN?: string;
  OPENCLAW_GATEWAY_TOKEN?: string;
  /** "1" opts into the scripted fake model (demos and tests); every reply says it is the fake. */
  EDGECLAW_FAKE_MODEL?: string;
  ANTHROPIC_API_KEY?: string;
  OPENAI_API_KEY?: string;
  /** Any other secret a SecretRef names. */
  [secret: string]: unknown;
}
