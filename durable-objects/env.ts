import type { SessionRpc } from "./session-api.ts";
import type {
  AuthLimiterRpc,
  AuthProfileStateRpc,
  BudgetRpc,
  ChannelStateRpc,
  CompanionContainerRpc,
  CompanionRpc,
  MemoryIndexRpc,
  MetricsShardRpc,
  SandboxRpc,
  SchedulerRpc,
} from "./rpc.ts";

/**
 * Bindings and secrets the Worker and its Durable Objects receive from wrangler: the one Env every
 * Durable Object is typed with (`DurableObject<Env>`). Namespaces are typed by each object's RPC
 * interface (rpc.ts, session-api.ts), never by its class, so this file imports no Durable Object.
 */
export interface Env {
  SESSIONS: DurableObjectNamespace<SessionRpc>;
  /** Failed gateway-auth counters, one object per client address bucket (workers/gateway-auth.ts). */
  AUTH_LIMITER: DurableObjectNamespace<AuthLimiterRpc>;
  /** Auth-profile cooldowns and usage for the whole gateway, one object named "global" (durable-objects/auth-profiles.ts). */
  AUTH_PROFILES: DurableObjectNamespace<AuthProfileStateRpc>;
  /** Durable counters behind GET /metrics, a fixed set of shards (functions/metrics/shards.ts). */
  METRICS: DurableObjectNamespace<MetricsShardRpc>;
  /** Spend counters and reservations, one object per budget scope (durable-objects/budget.ts). */
  BUDGETS: DurableObjectNamespace<BudgetRpc>;
  /** The one scheduler of cron jobs and heartbeats (durable-objects/scheduler.ts), named "global". */
  SCHEDULER: DurableObjectNamespace<SchedulerRpc>;
  /** One memory index keeper per agent (durable-objects/memory-index.ts): debounced reindex after writes. */
  MEMORY_INDEX: DurableObjectNamespace<MemoryIndexRpc>;
  /** One per companion deployment (durable-objects/companion.ts): lease + epoch, connector state, last status. */
  COMPANION: DurableObjectNamespace<CompanionRpc>;
  /** One per companion deployment (durable-objects/companion-container.ts): the Cloudflare Container running the companion. */
  COMPANION_CONTAINER: DurableObjectNamespace<CompanionContainerRpc>;
  /** "1" when `npm run deploy` added the companion container (socket accounts configured), "0" when it did not; unset in dev and tests. */
  EDGECLAW_COMPANION_CONTAINER?: string;
  /** The tables a channel keeps for one account (durable-objects/channel-state.ts), one per `<channel>:<accountId>`. */
  CHANNEL_STATE: DurableObjectNamespace<ChannelStateRpc>;
  /** One per sandbox scope (durable-objects/sandbox.ts): the Cloudflare Container the agent's commands run in. */
  SANDBOX: DurableObjectNamespace<SandboxRpc>;
  /** "1" when `npm run deploy` added the sandbox container (an agent's sandbox backend is "container"), "0" when not; unset in dev. */
  EDGECLAW_SANDBOX_CONTAINER?: string;
  /** Tests only: the loopback container engine standing in for the Containers runtime (durable-objects/sandbox/loopback-container.ts). */
  EDGECLAW_LOOPBACK_CONTAINERS?: string;
  /** The media store in production (wrangler.toml `[[r2_buckets]]`; functions/media/store.ts). */
  MEDIA?: R2Bucket;
  /** The media store of `npm run dev`: a folder of the data dir served by workerd (scripts/lib/workerd-config.ts). */
  MEDIA_DISK?: Fetcher;
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
