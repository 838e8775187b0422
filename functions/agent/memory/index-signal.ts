import type { EdgeclawConfig } from "../../config/schema.ts";
import { memoryIndexIsStale, syncMemoryIndex, type MemoryEnv, type SyncReport } from "./indexer.ts";
import { isMemorySourcePath } from "./sources.ts";
import { EmbeddingError } from "./embeddings.ts";
import { TransientError } from "../../core/errors.ts";

/**
 * How the rest of the gateway reaches an agent's index keeper (MemoryIndexDO, one per agent, bound
 * as MEMORY_INDEX): a write only marks the index dirty — the object's alarm reindexes after the
 * debounce, off the write's path — and a search that finds the index behind asks the object to
 * sync first, so concurrent searches never index the same files twice.
 */
export interface MemoryIndexKeeper {
  touch(agentId: string): Promise<void>;
  sync(agentId: string, force: boolean): Promise<SyncOutcome>;
}

/** A sync's result as it crosses the Durable Object boundary (error classes do not). */
export type SyncOutcome =
  | { ok: true; report: SyncReport }
  | { ok: false; reason: string; embeddings: boolean };

/** The index could not be brought up to date; `embeddings` when the embedding provider was the cause. */
export class MemoryIndexError extends TransientError {
  constructor(
    message: string,
    readonly embeddings: boolean,
  ) {
    super(message);
  }
}

/** Runs a sync here and reports it as a SyncOutcome (the keeper's side of `sync`). */
export async function syncOutcome(work: () => Promise<SyncReport>): Promise<SyncOutcome> {
  try {
    return { ok: true, report: await work() };
  } catch (error) {
    return {
      ok: false,
      reason: error instanceof Error ? error.message : String(error),
      embeddings: error instanceof EmbeddingError,
    };
  }
}

interface KeeperNamespace {
  idFromName(name: string): DurableObjectId;
  get(id: DurableObjectId): unknown;
}

function keeperFor(env: Record<string, unknown>, agentId: string): MemoryIndexKeeper | undefined {
  const ns = env.MEMORY_INDEX as KeeperNamespace | undefined;
  if (!ns || typeof ns.idFromName !== "function") return undefined;
  return ns.get(ns.idFromName(agentId)) as MemoryIndexKeeper;
}

/** After a workspace write: if the file is memory, schedule a debounced reindex. Never fails the write. */
export async function noteMemoryWrite(
  env: Record<string, unknown>,
  config: EdgeclawConfig,
  agentId: string,
  path: string,
): Promise<void> {
  if (!config.memory.search.enabled || !isMemorySourcePath(config.memory.search, path)) return;
  try {
    await keeperFor(env, agentId)?.touch(agentId);
  } catch (error) {
    // The next search finds the index behind and syncs it then.
    console.warn(
      `memory index: could not schedule a reindex for ${agentId}:`,
      error instanceof Error ? error.message : error,
    );
  }
}

/** Syncs now (through the keeper when bound, so syncs never overlap). Throws MemoryIndexError. */
export async function syncNow(
  env: MemoryEnv & Record<string, unknown>,
  config: EdgeclawConfig,
  agentId: string,
  force: boolean,
): Promise<SyncReport> {
  const keeper = keeperFor(env, agentId);
  const outcome = keeper
    ? await keeper.sync(agentId, force)
    : await syncOutcome(() => syncMemoryIndex(env, config, agentId, { force }));
  if (!outcome.ok) throw new MemoryIndexError(outcome.reason, outcome.embeddings);
  return outcome.report;
}

/** Before a search: bring the index up to date if a write, a deletion or a config change left it behind. */
export async function ensureIndexFresh(
  env: MemoryEnv & Record<string, unknown>,
  config: EdgeclawConfig,
  agentId: string,
): Promise<void> {
  if (await memoryIndexIsStale(env, config, agentId)) await syncNow(env, config, agentId, false);
}
