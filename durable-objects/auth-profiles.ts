import { DurableObject } from "cloudflare:workers";
import {
  applyOutcome,
  type ProfileOutcome,
  type ProfileUsage,
} from "../functions/agent/auth-profiles/cooldown.ts";
import type { Env } from "./env.ts";
import type { AuthProfileStateRpc } from "./rpc.ts";

/** Profiles remembered at most: a config names a handful; ids of removed profiles age out past this. */
export const MAX_AUTH_PROFILES = 256;
const MAX_PROFILE_ID_LENGTH = 200;
const PREFIX = "profile:";

/**
 * The usage of every auth profile the gateway rotates through (cooldowns, disable windows, error
 * counts, last used and last good), in one object named "global", so every session and every
 * isolate sees the same cooldown (OpenClaw keeps this per agent in its SQLite auth state). Its one
 * job: apply an outcome to a profile's row with the rules of functions/agent/auth-profiles/
 * cooldown.ts, and answer what it holds. Names and times only: no key material reaches it.
 * Bounded: at most MAX_AUTH_PROFILES rows; a new one beyond that replaces the least recently
 * updated.
 */
export class AuthProfileStateDO extends DurableObject<Env> implements AuthProfileStateRpc {
  async read(ids: string[]): Promise<Record<string, ProfileUsage>> {
    const keys = [...new Set(ids.filter(validId))].slice(0, 64).map((id) => PREFIX + id);
    if (keys.length === 0) return {};
    const rows = await this.ctx.storage.get<ProfileUsage>(keys);
    return Object.fromEntries([...rows].map(([key, usage]) => [key.slice(PREFIX.length), usage]));
  }

  async record(id: string, provider: string, outcome: ProfileOutcome): Promise<ProfileUsage> {
    if (!validId(id)) throw new Error("auth profile id: 1 to 200 characters");
    const key = PREFIX + id;
    const previous = await this.ctx.storage.get<ProfileUsage>(key);
    const next = applyOutcome(previous, provider.slice(0, 100), outcome, Date.now());
    await this.ctx.storage.put(key, next);
    if (!previous) await this.bound();
    return next;
  }

  /** Every profile remembered (the control page and GET /admin/auth-profiles). */
  async list(): Promise<Record<string, ProfileUsage>> {
    const rows = await this.ctx.storage.list<ProfileUsage>({ prefix: PREFIX });
    return Object.fromEntries([...rows].map(([key, usage]) => [key.slice(PREFIX.length), usage]));
  }

  /** Forgets the given profiles' cooldowns and counts (all when none are named); answers how many. */
  async reset(ids?: string[]): Promise<number> {
    const keys = ids
      ? ids.filter(validId).map((id) => PREFIX + id)
      : [...(await this.ctx.storage.list({ prefix: PREFIX })).keys()];
    return keys.length ? this.ctx.storage.delete(keys) : 0;
  }

  private async bound(): Promise<void> {
    const rows = await this.ctx.storage.list<ProfileUsage>({ prefix: PREFIX });
    if (rows.size <= MAX_AUTH_PROFILES) return;
    const oldest = [...rows]
      .sort((a, b) => a[1].updatedAt - b[1].updatedAt)
      .slice(0, rows.size - MAX_AUTH_PROFILES)
      .map(([key]) => key);
    await this.ctx.storage.delete(oldest);
  }
}

function validId(id: unknown): id is string {
  return typeof id === "string" && id.length > 0 && id.length <= MAX_PROFILE_ID_LENGTH;
}
