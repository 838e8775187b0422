import { geminiVersion } from "./google-thinking.ts";
import type { ProviderApi } from "./types.ts";
import type { BUILT_IN_MODEL_PROVIDERS } from "../../config/auth-schema.ts";

/**
 * The providers edgeclaw knows without a `models.providers` entry, and what a model id alone tells
 * about a model no catalog entry describes (OpenClaw resolves such ids dynamically, so a model
 * released after this build works with the right limits).
 */

export interface BuiltInProvider {
  api: Exclude<ProviderApi, "fake">;
  baseUrl: string;
  /** The model this provider's key alone selects when the config names none. */
  defaultModel: string;
  /** Env vars that hold its key, first set wins; default `<ID>_API_KEY` (providerKeyEnvName). */
  keyEnvNames?: string[];
}

/**
 * The providers that need no `models.providers` entry. Their `defaultModel`s are the only place the
 * key-alone defaults are written (a current Sonnet, a current GPT, a current Gemini Pro); the first
 * whose key is set wins. The ids are the config's list (BUILT_IN_MODEL_PROVIDERS, which validates
 * `auth.profiles` without loading this file): `satisfies` holds the two together.
 */
const BUILT_INS = {
  anthropic: {
    api: "anthropic-messages",
    baseUrl: "https://api.anthropic.com",
    defaultModel: "claude-sonnet-5",
  },
  openai: {
    api: "openai-completions",
    baseUrl: "https://api.openai.com/v1",
    defaultModel: "gpt-5.6-sol",
  },
  // Google AI Studio's Gemini API (providers/google): either key name, as OpenClaw reads them.
  google: {
    api: "google-generative-ai",
    baseUrl: "https://generativelanguage.googleapis.com/v1beta",
    defaultModel: "gemini-3.1-pro-preview",
    keyEnvNames: ["GEMINI_API_KEY", "GOOGLE_API_KEY"],
  },
} satisfies Record<(typeof BUILT_IN_MODEL_PROVIDERS)[number], BuiltInProvider>;

export const BUILT_IN_PROVIDERS: Record<string, BuiltInProvider> = BUILT_INS;

export const NATIVE_HOSTS: Record<Exclude<ProviderApi, "fake">, string> = {
  "anthropic-messages": "api.anthropic.com",
  "openai-completions": "api.openai.com",
  "openai-responses": "api.openai.com",
  "google-generative-ai": "generativelanguage.googleapis.com",
};

export interface ModelFamilyDefaults {
  contextWindow: number;
  maxTokens: number;
  reasoning: boolean;
}

/**
 * Gemini 2.5 and later: a 1,048,576-token input window, 65,536 output tokens, and thinking (Google's
 * model pages list these for every 2.5 and 3.x Pro, Flash and Flash-Lite). Other families keep the
 * resolver's defaults: their limits differ too much by model to guess from the id.
 */
export function modelFamilyDefaults(
  api: Exclude<ProviderApi, "fake">,
  modelId: string,
): ModelFamilyDefaults | undefined {
  if (api !== "google-generative-ai") return undefined;
  const version = geminiVersion(modelId);
  if (!version || version.major < 2) return undefined;
  // 2.0 models have the window but do not think.
  const thinks = version.major >= 3 || /^(models\/)?gemini-2\.5/.test(modelId.toLowerCase());
  return { contextWindow: 1_048_576, maxTokens: 65_536, reasoning: thinks };
}
