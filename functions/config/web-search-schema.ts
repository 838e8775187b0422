import { z } from "zod";
import { secretInputSchema } from "./secret-ref.ts";

/**
 * `web_search` per tools/web: the shared keys under `tools.web.search`, and each provider's own
 * under `plugins.entries.<plugin>.config.webSearch` (OpenClaw's canonical path). Every provider
 * id here has a plain HTTP API the Worker can call; the hosted answer engines (Gemini, Grok, Kimi,
 * Codex) and the keyless scrapers (DuckDuckGo) are not offered.
 */
export const WEB_SEARCH_PROVIDER_IDS = ["brave", "exa", "perplexity", "searxng", "tavily"] as const;
export type WebSearchProviderId = (typeof WEB_SEARCH_PROVIDER_IDS)[number];

export const webSearchSchema = z
  .object({
    enabled: z.boolean().default(true),
    /** Unset: the first provider with a credential, in OpenClaw's auto-detect order. */
    provider: z.enum(WEB_SEARCH_PROVIDER_IDS).optional(),
    maxResults: z.number().int().min(1).max(10).default(5),
    timeoutSeconds: z.number().int().positive().default(30),
    /** Results are reused this long per query and options (0 turns the cache off). */
    cacheTtlMinutes: z.number().nonnegative().default(15),
    /** Response bytes read from a provider before the answer is refused as too large. */
    maxResponseBytes: z.number().int().positive().default(2_000_000),
  })
  .prefault({});

/** `baseUrl`: the provider's API root, for a proxy, a sovereign endpoint or a test fake. */
const credentialFields = {
  apiKey: secretInputSchema.optional(),
  baseUrl: z.url().optional(),
};

const braveSettings = z.object({
  ...credentialFields,
  mode: z
    .literal("web", {
      error: 'only "web" (Brave\'s web search endpoint) is built; "llm-context" is not',
    })
    .default("web"),
});
const plainSettings = z.object(credentialFields);
const searxngSettings = z.object({
  ...credentialFields,
  /** Comma-separated SearXNG categories (default `general`). */
  categories: z.string().min(1).optional(),
  language: z.string().min(1).optional(),
});

/** `plugins.entries.<id>`, holding `config.webSearch` (each written out: zod's prefault does not type through a generic). */
const braveBlock = z
  .object({
    config: z
      .object({ webSearch: braveSettings.prefault({}) })
      .loose()
      .prefault({}),
  })
  .loose()
  .prefault({});
const plainBlock = z
  .object({
    config: z
      .object({ webSearch: plainSettings.prefault({}) })
      .loose()
      .prefault({}),
  })
  .loose()
  .prefault({});
const searxngBlock = z
  .object({
    config: z
      .object({ webSearch: searxngSettings.prefault({}) })
      .loose()
      .prefault({}),
  })
  .loose()
  .prefault({});

/** One provider's `webSearch` settings, whichever provider it is (the fields a provider lacks are absent). */
export type WebSearchSettings = {
  apiKey?: z.infer<typeof credentialFields.apiKey>;
  baseUrl?: string;
  mode?: "web";
  categories?: string;
  language?: string;
};

/**
 * `plugins`: only the web-search providers' blocks are read; OpenClaw's other plugin keys stay
 * known-but-unused (functions/config/openclaw-keys.ts warns about them).
 */
export const pluginsSchema = z
  .object({
    entries: z
      .object({
        brave: braveBlock,
        exa: plainBlock,
        perplexity: plainBlock,
        searxng: searxngBlock,
        tavily: plainBlock,
      })
      .loose()
      .prefault({}),
  })
  .loose()
  .prefault({});

export type WebSearchConfig = z.infer<typeof webSearchSchema>;
