import { profileSecretName, splitProfileId } from "../../config/auth-schema.ts";
import type { EdgeclawConfig } from "../../config/schema.ts";
import type { SecretEnv } from "../../config/secret-ref.ts";
import { unavailable, type ProfileFailureReason, type ProfileUsage } from "./cooldown.ts";

/**
 * The API-key profiles of one provider as the config declares them (`auth.profiles`, `auth.order`),
 * the Worker secret each reads, and the order a call tries them in (concepts/model-failover,
 * "rotation order"). The config holds no key: `<provider>:<name>` reads `<PROVIDER>_API_KEY_<NAME>`,
 * `<provider>:default` the provider's own key (auth-schema.ts `profileSecretName`).
 */

export interface AuthProfile {
  id: string;
  provider: string;
  /** The Worker secret this profile's key is read from; undefined: the provider's own key. */
  secretName?: string;
}

/** The provider's API-key profiles, in config order (other modes are not rotated here). */
export function providerAuthProfiles(config: EdgeclawConfig, providerId: string): AuthProfile[] {
  const wanted = providerId.toLowerCase();
  return Object.entries(config.auth.profiles)
    .filter(
      ([id, profile]) =>
        profile.mode === "api_key" &&
        (profile.provider ?? splitProfileId(id).provider).toLowerCase() === wanted,
    )
    .map(([id]) => {
      const secretName = profileSecretName(id);
      return { id, provider: providerId, ...(secretName ? { secretName } : {}) };
    });
}

export function hasAuthProfiles(config: EdgeclawConfig, providerId: string): boolean {
  return providerAuthProfiles(config, providerId).length > 0;
}

/** The profile's key now; `providerKey` is what the provider's own key resolved to. */
export function profileKey(
  profile: AuthProfile,
  env: SecretEnv,
  providerKey: string | undefined,
): string | undefined {
  if (!profile.secretName) return providerKey;
  const value = env[profile.secretName];
  return typeof value === "string" && value.length > 0 ? value : undefined;
}

export interface ProfilePlan {
  /** Usable now, in the order to try them. */
  usable: AuthProfile[];
  /** Cooling down or disabled, soonest usable first. */
  blocked: Array<{ profile: AuthProfile; until: number; reason: ProfileFailureReason }>;
}

/**
 * The try order: `auth.order.<provider>` when set (profiles it leaves out are not tried), else the
 * configured profiles least recently used first (ties in config order). Profiles in cooldown or
 * disabled go to the end, soonest usable first. A session's preferences go first while usable:
 * the profile `/model …@<profile>` pinned (`user`, tried even when auth.order leaves it out), then
 * the one that last answered it (`sticky`: the provider's prompt cache stays warm).
 */
export function planProfiles(
  config: EdgeclawConfig,
  profiles: AuthProfile[],
  usage: Record<string, ProfileUsage>,
  now: number,
  preferred: { user?: string; sticky?: string } = {},
): ProfilePlan {
  const provider = profiles[0]?.provider.toLowerCase();
  const orderKey = Object.keys(config.auth.order).find((key) => key.toLowerCase() === provider);
  const explicit = orderKey ? config.auth.order[orderKey] : undefined;
  const userPin = profiles.find((profile) => profile.id === preferred.user);
  const listed = explicit
    ? explicit
        .map((id) => profiles.find((profile) => profile.id === id))
        .filter((profile): profile is AuthProfile => profile !== undefined)
    : profiles
        .map((profile, index) => ({ profile, index, lastUsed: usage[profile.id]?.lastUsed ?? 0 }))
        .sort((a, b) => a.lastUsed - b.lastUsed || a.index - b.index)
        .map((entry) => entry.profile);
  const ordered = userPin && !listed.includes(userPin) ? [userPin, ...listed] : listed;
  const usable: AuthProfile[] = [];
  const blocked: ProfilePlan["blocked"] = [];
  for (const profile of ordered) {
    const block = unavailable(usage[profile.id], now);
    if (block) blocked.push({ profile, ...block });
    else usable.push(profile);
  }
  blocked.sort((a, b) => a.until - b.until);
  for (const id of [preferred.sticky, preferred.user]) {
    const at = usable.findIndex((profile) => profile.id === id);
    if (at > 0) usable.unshift(...usable.splice(at, 1));
  }
  return { usable, blocked };
}
