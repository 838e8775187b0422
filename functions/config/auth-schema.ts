import * as z from "zod";

/**
 * `auth.profiles` / `auth.order` (OpenClaw's concepts/model-failover, gateway/configuration-reference
 * "auth storage"): several credentials per model provider, each a profile `<provider>:<name>`, and
 * the order they are tried in. The config holds metadata and routing only, never a key: each
 * profile reads its own Worker secret (functions/agent/auth-profiles/profiles.ts names it).
 */

/** The model providers edgeclaw knows without a `models.providers` entry (providers/built-in-providers.ts). */
export const BUILT_IN_MODEL_PROVIDERS = ["anthropic", "openai", "google"] as const;

/**
 * OpenClaw's profile modes. Only `api_key` profiles take part in rotation here; the others (OAuth
 * logins, setup tokens, AWS SDK routes) are accepted so a config shared with OpenClaw still loads,
 * and `config check` says they are left out.
 */
export const AUTH_PROFILE_MODES = ["api_key", "oauth", "token", "aws-sdk"] as const;

const PROFILE_ID = /^([A-Za-z0-9][A-Za-z0-9._-]*):([A-Za-z0-9][A-Za-z0-9._@+-]*)$/;

const authProfileSchema = z
  .object({
    /** The profile's provider; defaults to the part of the id before the colon, and must equal it. */
    provider: z.string().min(1).optional(),
    /** `api_key` profiles rotate; OpenClaw's `oauth`, `token` and `aws-sdk` are accepted and never used here. */
    mode: z.enum(AUTH_PROFILE_MODES).default("api_key"),
  })
  .loose();

export const authSchema = z
  .object({
    /**
     * One entry per API key, `<provider>:<name>` (e.g. `anthropic:work`), never the key itself: it is
     * read from the Worker secret `<PROVIDER>_API_KEY_<NAME>`, and `<provider>:default` reads the
     * provider's own key (docs/concepts/model-failover.md).
     */
    profiles: z.record(z.string(), authProfileSchema).default({}),
    /** Per provider: the profile ids in the order they are tried (else least recently used first). */
    order: z.record(z.string().min(1), z.array(z.string().min(1)).max(32)).default({}),
  })
  .loose()
  .prefault({});

export type AuthConfig = z.infer<typeof authSchema>;

/** `anthropic:work` → provider `anthropic`, name `work` (the id is checked by the schema). */
export function splitProfileId(id: string): { provider: string; name: string } {
  const colon = id.indexOf(":");
  return { provider: id.slice(0, colon), name: id.slice(colon + 1) };
}

/**
 * The Worker secret an API-key profile reads: `<PROVIDER>_API_KEY_<NAME>`, upper-cased, every other
 * character `_` (`anthropic:work` → `ANTHROPIC_API_KEY_WORK`, `openai:team-b` → `OPENAI_API_KEY_TEAM_B`).
 * `<provider>:default` is the exception: it reads the provider's own key (models.providers.<id>.apiKey,
 * else `<PROVIDER>_API_KEY`), so a deployment with one key adds a second without moving the first.
 */
export function profileSecretName(profileId: string): string | undefined {
  const { provider, name } = splitProfileId(profileId);
  if (name.toLowerCase() === "default") return undefined;
  return `${envPart(provider)}_API_KEY_${envPart(name)}`;
}

function envPart(text: string): string {
  return text.toUpperCase().replace(/[^A-Z0-9]/g, "_");
}

interface AuthIssue {
  path: (string | number)[];
  message: string;
}

/**
 * What the schema alone cannot see: a profile whose provider is neither configured nor built in, a
 * profile whose `provider` disagrees with its id, and an order that names a profile not defined for
 * that provider. `providerIds` are the keys of `models.providers`.
 */
export function authConfigIssues(auth: AuthConfig, providerIds: string[]): AuthIssue[] {
  const known = new Set(
    [...BUILT_IN_MODEL_PROVIDERS, ...providerIds].map((id) => id.toLowerCase()),
  );
  const issues: AuthIssue[] = [];
  const knownList = () =>
    [...new Set([...providerIds, ...BUILT_IN_MODEL_PROVIDERS])].map((id) => `"${id}"`).join(", ");
  for (const [id, profile] of Object.entries(auth.profiles)) {
    if (!PROFILE_ID.test(id)) {
      issues.push({
        path: ["auth", "profiles", id],
        message:
          'a profile id is "<provider>:<name>" (letters, digits, . _ -), e.g. "anthropic:work"',
      });
      continue;
    }
    const prefix = splitProfileId(id).provider;
    const provider = profile.provider ?? prefix;
    if (provider.toLowerCase() !== prefix.toLowerCase())
      issues.push({
        path: ["auth", "profiles", id, "provider"],
        message: `"${provider}" differs from the provider in the profile id ("${prefix}"); name the profile "${provider}:<name>"`,
      });
    else if (!known.has(provider.toLowerCase()))
      issues.push({
        path: ["auth", "profiles", id, "provider"],
        message: `unknown model provider "${provider}": add models.providers.${provider} or use one of ${knownList()}`,
      });
  }
  const bySecret = new Map<string, string>();
  for (const id of Object.keys(auth.profiles)) {
    const secret = profileSecretName(id);
    if (!secret) continue;
    const other = bySecret.get(secret);
    if (other)
      issues.push({
        path: ["auth", "profiles", id],
        message: `reads the same Worker secret as "${other}" (${secret}); rename one of them`,
      });
    else bySecret.set(secret, id);
  }
  for (const [provider, ids] of Object.entries(auth.order)) {
    ids.forEach((id, index) => {
      const profile = auth.profiles[id];
      if (!profile)
        issues.push({
          path: ["auth", "order", provider, index],
          message: `"${id}" is not defined in auth.profiles`,
        });
      else if (
        (profile.provider ?? splitProfileId(id).provider).toLowerCase() !== provider.toLowerCase()
      )
        issues.push({
          path: ["auth", "order", provider, index],
          message: `"${id}" is a profile of another provider than "${provider}"`,
        });
    });
  }
  return issues;
}
