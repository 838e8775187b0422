import { DurableObject } from "cloudflare:workers";
import type { Env } from "./env.ts";
import type { MemoryIndexRpc } from "./rpc.ts";
import { configFromEnv } from "../functions/channels/gateway-config.ts";
import { syncMemoryIndex, type SyncReport } from "../functions/agent/memory/indexer.ts";
import { syncOutcome, type SyncOutcome } from "../functions/agent/memory/index-signal.ts";

/** Longest a stream of writes may hold the reindex back, in debounce periods. */
const MAX_DEFER_PERIODS = 20;
/** Failed syncs retried from the alarm, with backoff, before waiting for the next write or search. */
const MAX_ATTEMPTS = 8;
const MAX_BACKOFF_MS = 5 * 60_000;

/**
 * Keeps one agent's memory index in step with its workspace. Writes call `touch` (cheap: it only
 * moves this object's alarm to `memory.search.sync.watchDebounceMs` after the latest write, but
 * never more than 20 periods after the first unindexed one); the alarm then syncs. `sync` serves
 * searches that found the index behind and `memory index --force`. Syncs never overlap: a request
 * that arrives during one runs after it.
 */
export class MemoryIndexDO extends DurableObject<Env> implements MemoryIndexRpc {
  private chain: Promise<unknown> = Promise.resolve();

  async touch(agentId: string): Promise<void> {
    const now = Date.now();
    const debounce = configFromEnv(this.env).memory.search.sync.watchDebounceMs;
    const storage = this.ctx.storage;
    const dirtySince = (await storage.get<number>("dirtySince")) ?? now;
    await storage.put({ agentId, dirtySince, attempts: 0 });
    await storage.setAlarm(Math.min(now + debounce, dirtySince + debounce * MAX_DEFER_PERIODS));
  }

  async sync(agentId: string, force: boolean): Promise<SyncOutcome> {
    return syncOutcome(() => this.syncHere(agentId, force));
  }

  private async syncHere(agentId: string, force: boolean): Promise<SyncReport> {
    await this.ctx.storage.put("agentId", agentId);
    return this.serialized(async () => {
      // Writes that arrive during the sync set dirtySince again and get an alarm of their own.
      await this.ctx.storage.delete("dirtySince");
      return syncMemoryIndex(this.env, configFromEnv(this.env), agentId, { force });
    });
  }

  override async alarm(): Promise<void> {
    const agentId = await this.ctx.storage.get<string>("agentId");
    if (!agentId || (await this.ctx.storage.get<number>("dirtySince")) === undefined) return;
    try {
      const report = await this.syncHere(agentId, false);
      if (report.indexed || report.removed)
        console.log(
          `memory index ${agentId}: ${report.indexed} file(s) indexed, ${report.removed} removed in ${report.ms} ms`,
        );
      await this.ctx.storage.put("attempts", 0);
    } catch (error) {
      const attempts = ((await this.ctx.storage.get<number>("attempts")) ?? 0) + 1;
      await this.ctx.storage.put({ attempts, dirtySince: Date.now() });
      console.warn(
        `memory index ${agentId}: sync failed (attempt ${attempts}/${MAX_ATTEMPTS}):`,
        error instanceof Error ? error.message : error,
      );
      if (attempts < MAX_ATTEMPTS)
        await this.ctx.storage.setAlarm(
          Date.now() + Math.min(MAX_BACKOFF_MS, 2_000 * 2 ** attempts),
        );
    }
  }

  private serialized<T>(work: () => Promise<T>): Promise<T> {
    const next = this.chain.then(work, work);
    this.chain = next.catch(() => undefined);
    return next;
  }
}
