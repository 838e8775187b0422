import type { EdgeclawConfig } from "../../config/schema.ts";
import type { SecretEnv } from "../../config/secret-ref.ts";
import type { ResolvedModel } from "../providers/types.ts";
import { ModelError } from "../types.ts";
import {
  applyOutcome,
  isProfileFailure,
  type ProfileOutcome,
  type ProfileUsage,
} from "./cooldown.ts";
import { planProfiles, profileKey, providerAuthProfiles, type AuthProfile } from "./profiles.ts";

/**
 * Auth-profile rotation inside one model call (OpenClaw's `markAuthProfileFailure` flow): the call
 * to a provider with profiles uses the first usable one; a rate limit, auth or billing error marks
 * that profile (cooldown or disable, cooldown.ts) and the same request goes out again at once with
 * the next profile, before model-call.ts falls back to another model. It all happens inside the
 * model call's retry: no tool runs twice, the run is not restarted.
 */

/** Where profile usage is kept: the gateway's AuthProfileStateDO (one for every session). */
export interface AuthProfileStore {
  read(ids: string[]): Promise<Record<string, ProfileUsage>>;
  record(id: string, provider: string, outcome: ProfileOutcome): Promise<ProfileUsage>;
}

/** The profile a session last used per provider (session stickiness keeps the provider's cache warm). */
export interface AuthProfilePins {
  get(provider: string): string | undefined;
  set(provider: string, profileId: string): void;
  /** The profile `/model …@<profile>` pinned for this provider, if any. */
  user?(provider: string): string | undefined;
}

export interface AuthProfileRouting {
  store: AuthProfileStore;
  pins?: AuthProfilePins;
}

/** Rate limits rotate to another profile of the same provider once per call, then fall back (OpenClaw's default). */
export const RATE_LIMIT_PROFILE_ROTATIONS = 1;

/** A store that forgets after the call: for model calls made without the gateway's store. */
export function callLocalAuthStore(): AuthProfileStore {
  const usage = new Map<string, ProfileUsage>();
  return {
    read: async (ids) =>
      Object.fromEntries(ids.flatMap((id) => (usage.has(id) ? [[id, usage.get(id)!]] : []))),
    record: async (id, provider, outcome) => {
      const next = applyOutcome(usage.get(id), provider, outcome, Date.now());
      usage.set(id, next);
      return next;
    },
  };
}

export type RotationStep = "rotated" | "exhausted" | "not_a_profile_failure";

export class ProfileRotation {
  private rateLimitRotations = 0;

  constructor(
    private readonly base: ResolvedModel,
    private readonly queue: Array<{ profile: AuthProfile; key: string }>,
    private readonly routing: AuthProfileRouting,
  ) {}

  get profileId(): string {
    return this.queue[0]!.profile.id;
  }

  /** The model with the current profile's key. */
  model(): ResolvedModel {
    return { ...this.base, apiKey: this.queue[0]!.key };
  }

  /**
   * The attempt failed: a failure of the key's own marks the profile and moves to the next one
   * ("rotated": send again now), or there is none left ("exhausted": fall back to another model;
   * the cooled key is not retried). Any other failure is model-call.ts's to retry as before.
   */
  async failed(error: ModelError): Promise<RotationStep> {
    if (!isProfileFailure(error.kind)) return "not_a_profile_failure";
    const { profile } = this.queue[0]!;
    const outcome: ProfileOutcome = {
      ok: false,
      reason: error.kind,
      ...(error.retryAfterMs !== undefined ? { retryAfterMs: error.retryAfterMs } : {}),
    };
    const usage = await safeRecord(this.routing.store, profile, outcome);
    const mayRotate =
      this.queue.length > 1 &&
      (error.kind !== "rate_limit" || this.rateLimitRotations < RATE_LIMIT_PROFILE_ROTATIONS);
    if (mayRotate) {
      if (error.kind === "rate_limit") this.rateLimitRotations++;
      this.queue.shift();
    }
    logProfileFailure(profile, error, usage, mayRotate ? this.queue[0]!.profile.id : null);
    return mayRotate ? "rotated" : "exhausted";
  }

  /** The attempt answered: the profile is good again, and this session sticks to it. */
  async succeeded(): Promise<void> {
    const { profile } = this.queue[0]!;
    await safeRecord(this.routing.store, profile, { ok: true });
    this.routing.pins?.set(this.base.providerId, profile.id);
  }
}

/**
 * The rotation for a call to `model`, or undefined when its provider has no profiles (its one key
 * is used as before). Throws a failover-worthy ModelError when no profile can be used now: every
 * one is cooling down or disabled (the message names them and when the first is usable again), or
 * none has its secret set.
 */
export async function startRotation(
  config: EdgeclawConfig,
  env: SecretEnv,
  model: ResolvedModel,
  routing: AuthProfileRouting,
  now = Date.now(),
): Promise<ProfileRotation | undefined> {
  const profiles = providerAuthProfiles(config, model.providerId);
  if (profiles.length === 0) return undefined;
  const usage = await routing.store
    .read(profiles.map((profile) => profile.id))
    .catch((error: unknown) => {
      // The state object unreachable: rotate on this call's own failures rather than fail it.
      console.warn(`auth profiles: state unavailable (${String(error)}); trying them in order`);
      return {};
    });
  const plan = planProfiles(config, profiles, usage, now, {
    user: routing.pins?.user?.(model.providerId),
    sticky: routing.pins?.get(model.providerId),
  });
  const queue = plan.usable.flatMap((profile) => {
    const key = profileKey(profile, env, model.apiKey);
    return key ? [{ profile, key }] : [];
  });
  if (queue.length > 0) return new ProfileRotation(model, queue, routing);
  if (plan.blocked.length > 0) {
    const first = plan.blocked[0]!;
    const list = plan.blocked
      .map(
        (entry) =>
          `${entry.profile.id} ${entry.reason === "billing" ? "disabled (billing)" : `cooling down (${entry.reason})`} for ${seconds(entry.until - now)}`,
      )
      .join(", ");
    throw new ModelError(
      first.reason,
      `every auth profile of "${model.providerId}" is unavailable: ${list}; the first is usable again in ${seconds(first.until - now)}`,
      undefined,
      first.until - now,
    );
  }
  const names = plan.usable.map((profile) => profile.secretName ?? `the ${profile.provider} key`);
  throw new ModelError(
    "auth",
    `No API key for the auth profiles of "${model.providerId}": set ${names.join(" or ")}`,
  );
}

async function safeRecord(
  store: AuthProfileStore,
  profile: AuthProfile,
  outcome: ProfileOutcome,
): Promise<ProfileUsage | undefined> {
  try {
    return await store.record(profile.id, profile.provider, outcome);
  } catch (error) {
    console.warn(`auth profiles: could not record ${profile.id} (${String(error)})`);
    return undefined;
  }
}

/** One line per marked profile: names, reason and times only (never a key, never the provider's text). */
function logProfileFailure(
  profile: AuthProfile,
  error: ModelError,
  usage: ProfileUsage | undefined,
  next: string | null,
): void {
  const until = usage?.disabledUntil ?? usage?.cooldownUntil;
  console.warn(
    JSON.stringify({
      event: "auth_profile_failure",
      provider: profile.provider,
      profile: profile.id,
      reason: error.kind,
      status: error.status ?? null,
      errorCount: usage?.errorCount ?? null,
      unavailableUntil: until !== undefined ? new Date(until).toISOString() : null,
      nextProfile: next,
    }),
  );
}

function seconds(ms: number): string {
  const s = Math.max(1, Math.ceil(ms / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.round(s / 60)}m`;
  return `${Math.round(s / 3600)}h`;
}
