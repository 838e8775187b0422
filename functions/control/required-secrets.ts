import { channelSecretNames } from "../channels/credential-check.ts";
import type { EdgeclawConfig } from "../config/schema.ts";
import { referencedSecretIds } from "../config/secret-scan.ts";
import { profileSecretName } from "../config/auth-schema.ts";
import { providerAuthProfiles } from "../agent/auth-profiles/profiles.ts";

export interface RequiredSecret {
  name: string;
  why: string;
  /** Names that stand in for this one; any one set is enough (Feishu's verification token for its encrypt key). */
  alternatives?: string[];
}

/**
 * The Worker secrets a deployment of this config reads: the database, the gateway token (unless
 * auth is off or the config carries one inline), a provider key for each model provider in use
 * (or, for a provider with auth profiles, each profile's own key: `auth.profiles`),
 * each enabled channel account's credentials (their env fallbacks included, as each channel
 * declares them: functions/channels/<id>/credentials.ts), and every other secret a SecretRef or
 * `${VAR}` in the config names.
 */
export function requiredSecrets(
  config: EdgeclawConfig,
  raw: Record<string, unknown>,
): RequiredSecret[] {
  const secrets = new Map<string, string>();
  secrets.set("DATABASE_URL", "Neon connection string");
  const auth = config.gateway.auth;
  // A SecretRef token is listed below with the other referenced secrets; an inline one needs nothing.
  if (auth.mode !== "none" && auth.token === undefined) {
    secrets.set(
      "EDGECLAW_GATEWAY_TOKEN",
      "Bearer token for the API, web chat and admin (any long random string)",
    );
  }
  for (const provider of providersInUse(config)) {
    const known = PROVIDER_KEYS[provider];
    const explicit = config.models.providers[provider]?.apiKey;
    // With auth profiles the provider's own key is read only by its `<provider>:default` profile.
    const profiles = providerAuthProfiles(config, provider);
    const ownKeyRead = profiles.length === 0 || profiles.some((profile) => !profile.secretName);
    if (known && explicit === undefined && ownKeyRead)
      secrets.set(known, `API key for ${provider} models`);
  }
  for (const [id, profile] of Object.entries(config.auth.profiles)) {
    const name = profile.mode === "api_key" ? profileSecretName(id) : undefined;
    if (name) secrets.set(name, `API key of auth profile ${id}`);
  }
  const alternatives = new Map<string, string[]>();
  for (const { name, alternatives: others, why } of channelSecretNames(config)) {
    if (secrets.has(name)) continue;
    secrets.set(name, others.length ? `${why} (or ${others.join(" / ")} instead)` : why);
    if (others.length) alternatives.set(name, others);
  }
  for (const id of referencedSecretIds(raw))
    if (!secrets.has(id)) secrets.set(id, "named in the config");
  return [...secrets].map(([name, why]) => {
    const others = alternatives.get(name);
    return others ? { name, why, alternatives: others } : { name, why };
  });
}

const PROVIDER_KEYS: Record<string, string> = {
  anthropic: "ANTHROPIC_API_KEY",
  openai: "OPENAI_API_KEY",
  // GOOGLE_API_KEY works too (model-resolve.ts); OpenClaw's docs lead with this one.
  google: "GEMINI_API_KEY",
};

function providersInUse(config: EdgeclawConfig): Set<string> {
  const refs = [
    config.agents.defaults.model.primary,
    ...config.agents.defaults.model.fallbacks,
    ...config.agents.list.flatMap((agent) => [
      agent.model?.primary,
      ...(agent.model?.fallbacks ?? []),
    ]),
  ];
  const providers = new Set<string>();
  for (const ref of refs) if (ref) providers.add(ref.slice(0, ref.indexOf("/")));
  return providers;
}
