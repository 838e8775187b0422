import { splitProfileId } from "../../config/auth-schema.ts";
import type { EdgeclawConfig } from "../../config/schema.ts";
import type { SecretEnv } from "../../config/secret-ref.ts";
import { providerApiKey } from "../model-resolve.ts";
import { unavailable, type ProfileFailureReason, type ProfileUsage } from "./cooldown.ts";
import { planProfiles, profileKey, providerAuthProfiles } from "./profiles.ts";

/**
 * What an operator may see of the auth profiles (GET /admin/auth-profiles, the control page,
 * /status): each profile's name, the Worker secret it reads and whether that is set, and its
 * cooldown state. Secret names only: no value, no prefix, no length leaves this file.
 */

export interface ProfileView {
  id: string;
  provider: string;
  /** The Worker secret (or config key) the profile's key is read from. */
  secret: string;
  secretSet: boolean;
  state: "ready" | "cooldown" | "disabled" | "no_key";
  reason?: ProfileFailureReason;
  /** Epoch ms the cooldown or disable window ends. */
  until?: number;
  errorCount: number;
  lastUsed?: number;
  lastGood?: number;
}

export interface ProviderProfilesView {
  provider: string;
  /** "auth.order" when the config orders them, else least recently used first. */
  orderedBy: "auth.order" | "least-recently-used";
  /** In the order the next call would try them. */
  profiles: ProfileView[];
}

export interface AuthProfilesView {
  providers: ProviderProfilesView[];
  /** Profiles of a mode edgeclaw does not rotate (oauth, token, aws-sdk): listed, never used. */
  ignored: Array<{ id: string; mode: string }>;
}

/** Every provider with profiles, with the profiles' state from the gateway's store. */
export function authProfilesView(
  config: EdgeclawConfig,
  env: SecretEnv,
  usage: Record<string, ProfileUsage>,
  now: number,
): AuthProfilesView {
  const providers = [
    ...new Set(
      Object.entries(config.auth.profiles)
        .filter(([, profile]) => profile.mode === "api_key")
        .map(([id, profile]) => profile.provider ?? splitProfileId(id).provider),
    ),
  ];
  return {
    providers: providers.map((provider) => providerProfilesView(config, env, provider, usage, now)),
    ignored: Object.entries(config.auth.profiles)
      .filter(([, profile]) => profile.mode !== "api_key")
      .map(([id, profile]) => ({ id, mode: profile.mode })),
  };
}

export function providerProfilesView(
  config: EdgeclawConfig,
  env: SecretEnv,
  provider: string,
  usage: Record<string, ProfileUsage>,
  now: number,
): ProviderProfilesView {
  const profiles = providerAuthProfiles(config, provider);
  const plan = planProfiles(config, profiles, usage, now);
  const ordered = [...plan.usable, ...plan.blocked.map((entry) => entry.profile)];
  const own = providerApiKey(config, env, provider);
  const explicit = Object.keys(config.auth.order).some(
    (key) => key.toLowerCase() === provider.toLowerCase(),
  );
  return {
    provider,
    orderedBy: explicit ? "auth.order" : "least-recently-used",
    profiles: ordered.map((profile) => {
      const stored = usage[profile.id];
      const block = unavailable(stored, now);
      const secretSet = profileKey(profile, env, own.key) !== undefined;
      return {
        id: profile.id,
        provider,
        secret: profile.secretName ?? own.source,
        secretSet,
        state: block
          ? block.reason === "billing"
            ? "disabled"
            : "cooldown"
          : secretSet
            ? "ready"
            : "no_key",
        ...(block ? { reason: block.reason, until: block.until } : {}),
        errorCount: stored?.errorCount ?? 0,
        ...(stored?.lastUsed !== undefined ? { lastUsed: stored.lastUsed } : {}),
        ...(stored?.lastGood !== undefined ? { lastGood: stored.lastGood } : {}),
      };
    }),
  };
}

/** `config check`'s lines: profiles that are never used, and profiles whose secret `env` lacks. */
export function authProfileWarnings(config: EdgeclawConfig, env: SecretEnv): string[] {
  const view = authProfilesView(config, env, {}, Date.now());
  return [
    ...view.ignored.map(
      ({ id, mode }) =>
        `auth.profiles.${id}: mode "${mode}" is not supported here (API-key profiles only; OAuth logins are OpenClaw's), so this profile is never used`,
    ),
    ...view.providers.flatMap((provider) =>
      provider.profiles
        .filter((profile) => !profile.secretSet)
        .map(
          (profile) =>
            `auth.profiles.${profile.id}: its key is not set (Worker secret ${profile.secret}), so calls skip it`,
        ),
    ),
  ];
}
