import * as z from "zod";
import type { EdgeclawConfig, ProviderConfig } from "../config/schema.ts";
import { resolveSecret, type SecretEnv } from "../config/secret-ref.ts";
import { builtInModelPrice } from "./providers/built-in-prices.ts";
import { FAKE_MODEL_REF, FAKE_PROVIDER_ID } from "./providers/fake.ts";
import {
  BUILT_IN_PROVIDERS,
  modelFamilyDefaults,
  NATIVE_HOSTS,
} from "./providers/built-in-providers.ts";
import type { CacheRetention, ModelCost, ProviderApi, ResolvedModel } from "./providers/types.ts";
import { ModelError } from "./types.ts";
import { hasAuthProfiles } from "./auth-profiles/profiles.ts";

/**
 * `provider/model` refs → everything a call needs: wire format, base URL, key, limits, price.
 * Providers come from `models.providers.<id>` plus three built-ins (`anthropic`, `openai`, `google`) whose
 * base URLs the config may override (proxies, sovereign clouds, tests). A custom provider without
 * `api` speaks openai-completions, the format of Ollama, vLLM, OpenRouter and most gateways.
 */

export interface ModelSelection {
  primary?: string;
  fallbacks: string[];
  /**
   * Why `primary` is what it is: named in the config (or by /model), the demo model
   * (EDGECLAW_FAKE_MODEL=1), or a built-in provider's default because its key is set.
   */
  origin?: "config" | "demo" | "key-default";
}

/** OpenClaw's defaults for a custom provider's model when the config omits them. */
export const DEFAULT_CONTEXT_WINDOW = 200_000;
export const DEFAULT_MAX_TOKENS = 8192;
/** Stream idle timeout: 120 s for cloud endpoints, 300 s for self-hosted ones. */
export const CLOUD_IDLE_TIMEOUT_MS = 120_000;
export const SELF_HOSTED_IDLE_TIMEOUT_MS = 300_000;

const ZERO_COST: ModelCost = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };

/** Provider-level keys the shared schema keeps as unknown (`.loose()`); validated here where they are read. */
const providerExtrasSchema = z
  .object({
    timeoutSeconds: z.number().positive().optional(),
    contextWindow: z.number().int().positive().optional(),
    maxTokens: z.number().int().positive().optional(),
  })
  .loose();

/** Splits at the first `/` (OpenRouter-style refs keep the rest: `openrouter/moonshotai/kimi-k2`). */
export function parseModelRef(ref: string): { providerId: string; modelId: string } | undefined {
  const slash = ref.indexOf("/");
  if (slash <= 0 || slash === ref.length - 1) return undefined;
  return { providerId: ref.slice(0, slash).trim(), modelId: ref.slice(slash + 1).trim() };
}

/** The demo model is opted into per deployment; it never answers silently in place of a real one. */
export function isFakeModelEnabled(env: SecretEnv): boolean {
  return env.EDGECLAW_FAKE_MODEL === "1";
}

/**
 * The selection for one agent. The demo model first when it is switched on: EDGECLAW_FAKE_MODEL=1
 * is an explicit opt-in for this deployment, so it beats the config's models and any key in the
 * shell (a newcomer starting from edgeclaw.example.json5 with the demo switch gets the demo, not
 * "All models failed"). Otherwise the agent's own `model` (strict unless it lists `fallbacks`, as
 * OpenClaw), else `agents.defaults.model` with the default fallbacks, else the default model of
 * each built-in provider whose key is set (the first is primary).
 */
export function modelSelectionFor(
  config: EdgeclawConfig,
  env: SecretEnv,
  agentId?: string,
): ModelSelection {
  if (isFakeModelEnabled(env)) return { primary: FAKE_MODEL_REF, fallbacks: [], origin: "demo" };
  return configuredSelection(config, env, agentId);
}

/** The selection the config and the keys give, ignoring the demo switch. */
function configuredSelection(
  config: EdgeclawConfig,
  env: SecretEnv,
  agentId?: string,
): ModelSelection {
  const defaults = config.agents.defaults.model;
  const agent = agentId ? config.agents.list.find((entry) => entry.id === agentId) : undefined;
  if (agent?.model?.primary)
    return { primary: agent.model.primary, fallbacks: agent.model.fallbacks, origin: "config" };
  const fallbacks = agent?.model?.fallbacks.length ? agent.model.fallbacks : defaults.fallbacks;
  if (defaults.primary) return { primary: defaults.primary, fallbacks, origin: "config" };
  const keyed = keyDefaultModels(config, env);
  if (keyed.length === 0) return { fallbacks };
  return {
    primary: keyed[0],
    fallbacks: [...new Set([...keyed.slice(1), ...fallbacks])],
    origin: "key-default",
  };
}

/** `provider/model` of each built-in provider's default whose key resolves now, in preference order. */
function keyDefaultModels(config: EdgeclawConfig, env: SecretEnv): string[] {
  return Object.entries(BUILT_IN_PROVIDERS)
    .map(([providerId, provider]) => `${providerId}/${provider.defaultModel}`)
    .filter((ref) => {
      try {
        resolveModel(config, env, ref);
        return true;
      } catch {
        return false;
      }
    });
}

/** The env var that holds a provider's key when the config gives none (`ANTHROPIC_API_KEY`). */
export function providerKeyEnvName(providerId: string): string {
  return `${providerId.toUpperCase().replace(/[^A-Z0-9]/g, "_")}_API_KEY`;
}

/**
 * A provider's own key (models.providers.<id>.apiKey, else its env var) and where it is read from,
 * by name: what `<provider>:default` auth profiles use, and what /status and the control page name.
 */
export function providerApiKey(
  config: EdgeclawConfig,
  env: SecretEnv,
  providerId: string,
): { key?: string; source: string } {
  const provider = findProviderConfig(config, providerId)?.provider;
  const keyEnvNames = BUILT_IN_PROVIDERS[providerId.toLowerCase()]?.keyEnvNames ?? [
    providerKeyEnvName(providerId),
  ];
  const key =
    resolveSecret(provider?.apiKey, env) ??
    keyEnvNames.map((name) => stringFrom(env[name])).find(Boolean);
  return {
    ...(key ? { key } : {}),
    source: describeSecretSource(provider?.apiKey, keyEnvNames.join(" or ")),
  };
}

export function resolveModel(config: EdgeclawConfig, env: SecretEnv, ref: string): ResolvedModel {
  const parts = parseModelRef(ref);
  if (!parts)
    throw new ModelError("not_configured", `Invalid model ref "${ref}": expected "provider/model"`);
  const { modelId } = parts;
  const configured = findProviderConfig(config, parts.providerId);
  const providerId = configured?.id ?? parts.providerId.toLowerCase();
  const provider = configured?.provider;
  const builtIn = BUILT_IN_PROVIDERS[providerId];

  if (!provider && providerId === FAKE_PROVIDER_ID) return fakeModel(ref, modelId);
  if (!provider && !builtIn) {
    throw new ModelError(
      "not_configured",
      `Unknown model provider "${providerId}" in "${ref}": add models.providers.${providerId} { baseUrl, api, apiKey } or use anthropic/…, openai/… or google/…`,
    );
  }

  const api: Exclude<ProviderApi, "fake"> = provider?.api ?? builtIn?.api ?? "openai-completions";
  const baseUrl = provider?.baseUrl ?? builtIn?.baseUrl;
  if (!baseUrl)
    throw new ModelError(
      "not_configured",
      `models.providers.${providerId}.baseUrl is not set (needed for "${ref}")`,
    );

  const { key: apiKey, source } = providerApiKey(config, env, providerId);
  // With auth profiles each call takes its key from a profile (auth-profiles/rotation.ts).
  if (
    !apiKey &&
    (builtIn || provider?.apiKey !== undefined) &&
    !hasAuthProfiles(config, providerId)
  ) {
    throw new ModelError(
      "auth",
      `No API key for provider "${providerId}": set ${source} (or models.providers.${providerId}.apiKey)`,
    );
  }

  const extras = providerExtrasSchema.parse(provider ?? {});
  const entry = provider?.models.find((model) => model.id === modelId);
  // What the model's id alone tells about an id the catalog does not describe (a new Gemini).
  const family = modelFamilyDefaults(api, modelId);
  const host = hostOf(baseUrl);
  return {
    ref: `${providerId}/${modelId}`,
    providerId,
    modelId,
    api,
    baseUrl,
    apiKey,
    headers: { ...(provider?.headers ?? {}) },
    maxTokens: entry?.maxTokens ?? extras.maxTokens ?? family?.maxTokens ?? DEFAULT_MAX_TOKENS,
    contextWindow:
      entry?.contextWindow ??
      extras.contextWindow ??
      family?.contextWindow ??
      DEFAULT_CONTEXT_WINDOW,
    ...priceOf(providerId, modelId, entry),
    idleTimeoutMs: extras.timeoutSeconds
      ? extras.timeoutSeconds * 1000
      : isSelfHostedHost(host)
        ? SELF_HOSTED_IDLE_TIMEOUT_MS
        : CLOUD_IDLE_TIMEOUT_MS,
    native: host === NATIVE_HOSTS[api],
    acceptsImages: entry?.input ? entry.input.includes("image") : builtIn !== undefined,
    reasoning: entry?.reasoning ?? family?.reasoning ?? false,
    ...(entry?.compat?.supportedReasoningEfforts
      ? { reasoningEfforts: entry.compat.supportedReasoningEfforts }
      : {}),
    cacheRetention: cacheRetentionFor(
      config,
      `${providerId}/${modelId}`,
      host === NATIVE_HOSTS[api],
    ),
  };
}

const cacheParamsSchema = z
  .object({ cacheRetention: z.enum(["none", "short", "long"]).optional() })
  .loose();

/**
 * OpenClaw's `cacheRetention`: `agents.defaults.models["provider/model"].params`, else
 * `agents.defaults.params`; unset, "short" on the provider's own endpoint and "none" through a
 * proxy (which may refuse the field).
 */
function cacheRetentionFor(config: EdgeclawConfig, ref: string, native: boolean): CacheRetention {
  const defaults = config.agents.defaults as {
    models?: Record<string, { params?: unknown }>;
    params?: unknown;
  };
  for (const params of [defaults.models?.[ref]?.params, defaults.params]) {
    const parsed = cacheParamsSchema.safeParse(params ?? {});
    if (parsed.success && parsed.data.cacheRetention) return parsed.data.cacheRetention;
  }
  return native ? "short" : "none";
}

/**
 * The price of `provider/model` as the config and the built-in table give it, with no key needed
 * (config check reads it offline); undefined when nothing prices it. The demo model is free.
 */
export function modelPriceFor(config: EdgeclawConfig, ref: string): ModelCost | undefined {
  const parts = parseModelRef(ref);
  if (!parts) return undefined;
  const configured = findProviderConfig(config, parts.providerId);
  const providerId = configured?.id ?? parts.providerId.toLowerCase();
  if (!configured && providerId === FAKE_PROVIDER_ID) return { ...ZERO_COST };
  const entry = configured?.provider.models.find((model) => model.id === parts.modelId);
  return priceOf(providerId, parts.modelId, entry).cost;
}

/** A catalog `cost` wins (missing fields are 0: the operator wrote the entry); else the built-in table. */
function priceOf(
  providerId: string,
  modelId: string,
  entry: ProviderConfig["models"][number] | undefined,
): { cost?: ModelCost } {
  if (entry?.cost) return { cost: { ...ZERO_COST, ...entry.cost } };
  const builtIn = builtInModelPrice(providerId, modelId);
  return builtIn ? { cost: builtIn } : {};
}

export interface ConfiguredModel {
  ref: string;
  providerId: string;
  modelId: string;
  name?: string;
  api?: ProviderApi;
  contextWindow?: number;
  maxTokens?: number;
  cost?: ModelCost;
  /** Resolvable right now (provider known, key present). */
  available: boolean;
  unavailableReason?: string;
  /** Where the config names it. */
  roles: Array<"primary" | "fallback" | "agent" | "catalog" | "demo">;
}

/**
 * Every model the config mentions (provider catalogs, default primary/fallbacks, agent models) and
 * the demo model when it is on, each with whether it can be called now. For GET /v1/models and /status.
 */
export function listConfiguredModels(config: EdgeclawConfig, env: SecretEnv): ConfiguredModel[] {
  const byRef = new Map<string, ConfiguredModel>();
  const add = (ref: string, role: ConfiguredModel["roles"][number], name?: string) => {
    const parts = parseModelRef(ref);
    if (!parts) return;
    let entry = byRef.get(ref);
    if (!entry) {
      entry = {
        ref,
        providerId: parts.providerId,
        modelId: parts.modelId,
        available: false,
        roles: [],
      };
      try {
        const model = resolveModel(config, env, ref);
        Object.assign(entry, {
          api: model.api,
          contextWindow: model.contextWindow,
          maxTokens: model.maxTokens,
          cost: model.cost,
          available: true,
        });
      } catch (error) {
        entry.unavailableReason = error instanceof Error ? error.message : String(error);
      }
      byRef.set(ref, entry);
    }
    if (name && !entry.name) entry.name = name;
    if (!entry.roles.includes(role)) entry.roles.push(role);
  };
  // What the config names is listed even while the demo switch answers in its place.
  const selection = configuredSelection(config, env);
  if (selection.primary) add(selection.primary, "primary");
  for (const ref of selection.fallbacks) add(ref, "fallback");
  for (const agent of config.agents.list) {
    if (agent.model?.primary) add(agent.model.primary, "agent");
    for (const ref of agent.model?.fallbacks ?? []) add(ref, "agent");
  }
  for (const [providerId, provider] of Object.entries(config.models.providers)) {
    for (const model of provider.models) add(`${providerId}/${model.id}`, "catalog", model.name);
  }
  if (isFakeModelEnabled(env)) add(FAKE_MODEL_REF, "demo", "edgeclaw fake model (demo)");
  return [...byRef.values()];
}

function fakeModel(ref: string, modelId: string): ResolvedModel {
  return {
    ref,
    providerId: FAKE_PROVIDER_ID,
    modelId,
    api: "fake",
    baseUrl: "",
    headers: {},
    maxTokens: DEFAULT_MAX_TOKENS,
    contextWindow: DEFAULT_CONTEXT_WINDOW,
    cost: ZERO_COST,
    idleTimeoutMs: CLOUD_IDLE_TIMEOUT_MS,
    native: false,
    acceptsImages: false,
    cacheRetention: "none",
    reasoning: false,
  };
}

function findProviderConfig(
  config: EdgeclawConfig,
  providerId: string,
): { id: string; provider: ProviderConfig } | undefined {
  const providers = config.models.providers;
  if (providers[providerId]) return { id: providerId, provider: providers[providerId] };
  const lower = providerId.toLowerCase();
  const match = Object.keys(providers).find((id) => id.toLowerCase() === lower);
  return match ? { id: match, provider: providers[match]! } : undefined;
}

function describeSecretSource(input: ProviderConfig["apiKey"], fallbackEnv: string): string {
  if (input && typeof input === "object") return input.id;
  if (typeof input === "string") {
    const named = /^\$\{([A-Z0-9_]+)\}$/.exec(input);
    if (named) return named[1]!;
  }
  return fallbackEnv;
}

function stringFrom(value: unknown): string | undefined {
  return typeof value === "string" && value.length > 0 ? value : undefined;
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return "";
  }
}

function isSelfHostedHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, "");
  return (
    bare === "localhost" ||
    bare.endsWith(".local") ||
    bare.endsWith(".internal") ||
    bare === "::1" ||
    /^127\./.test(bare) ||
    /^10\./.test(bare) ||
    /^192\.168\./.test(bare) ||
    /^172\.(1[6-9]|2\d|3[01])\./.test(bare) ||
    /^100\.(6[4-9]|[7-9]\d|1[01]\d|12[0-7])\./.test(bare) ||
    /^f[cd][0-9a-f]{2}:/.test(bare)
  );
}
