import type { ModelRequest, ModelResult } from "../types.ts";

/**
 * The wire formats edgeclaw speaks, under OpenClaw's `api` names; `fake` is the in-Worker demo
 * model (no network).
 */
export type ProviderApi =
  | "anthropic-messages"
  | "openai-completions"
  | "openai-responses"
  | "google-generative-ai"
  | "fake";

/** Price per million tokens, from `models.providers.<id>.models[].cost`. */
export interface ModelCost {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

/** A `provider/model` ref resolved against the config and env: everything one call needs. */
export interface ResolvedModel {
  ref: string;
  providerId: string;
  modelId: string;
  api: ProviderApi;
  baseUrl: string;
  /** Absent for keyless local servers (Ollama, vLLM without auth). Never logged. */
  apiKey?: string;
  headers: Record<string, string>;
  maxTokens: number;
  contextWindow: number;
  /**
   * The catalog's `cost`, else the built-in price of a provider's default model
   * (built-in-prices.ts); absent when neither gives one — the price is unknown, and a USD budget
   * refuses the call rather than count it as free (budgets.allowUnpricedModels opts out).
   */
  cost?: ModelCost;
  /** First-byte and between-chunk timeout. */
  idleTimeoutMs: number;
  /**
   * The provider's own public endpoint (api.anthropic.com, api.openai.com,
   * generativelanguage.googleapis.com), not a proxy.
   */
  native: boolean;
  /**
   * Takes images as pixels: the catalog entry's `input` lists "image"; without an entry, the
   * built-in anthropic and openai providers do and every other provider does not.
   */
  acceptsImages: boolean;
  /**
   * Anthropic prompt caching (`params.cacheRetention`): "short" (5 min) by default on the native
   * endpoint, "none" elsewhere unless the config asks ("short" or "long", 1 h) for a proxy that
   * passes the field on.
   */
  cacheRetention: CacheRetention;
  /**
   * The catalog entry declares `reasoning: true` (OpenClaw's key): an unset thinking level then
   * resolves to "medium", and an OpenAI-compatible endpoint that is not api.openai.com is sent
   * `reasoning_effort`.
   */
  reasoning: boolean;
  /** `compat.supportedReasoningEfforts`: the `reasoning_effort` values this model takes. */
  reasoningEfforts?: string[];
}

export type CacheRetention = "none" | "short" | "long";

export type ProviderResult = Omit<ModelResult, "modelRef">;

/** One wire adapter: one request, streamed, translated back into our message model. */
export type ProviderCall = (model: ResolvedModel, request: ModelRequest) => Promise<ProviderResult>;
