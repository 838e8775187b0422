import * as z from "zod";
import { secretInputSchema } from "./secret-ref.ts";

/*
 * The web tools' keys: `web_search` (and the plugin entries that carry its providers) and, below,
 * `browser`. One file, not two, so the config schema still loads fewer than 20 files
 * (test/scripts/shape/layering.node-test.ts).
 */

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

/**
 * `browser` (OpenClaw's tools/browser): the agent's one browser tool. edgeclaw drives Cloudflare
 * Browser Run from a Worker of its own (workers/browser/, docs/concepts/browser.md); the tool is
 * offered only while that Worker is bound as `BROWSER_WORKER`, and `enabled: false` takes it away.
 *
 * OpenClaw's keys kept here: `enabled`, `evaluateEnabled`, `ssrfPolicy`, `tabCleanup.enabled`,
 * `snapshotDefaults.mode`. Its local-browser keys (profiles, cdpUrl, executablePath, headless,
 * noSandbox, attachOnly, defaultProfile) name a browser on the gateway's machine, which a Worker has
 * not; they are accepted and not acted on. The keys marked edgeclaw bound what a hosted browser costs.
 */
export const browserSchema = z
  .object({
    /** Offer the `browser` tool (only while the browser Worker is bound as `BROWSER_WORKER`). */
    enabled: z.boolean().default(true),
    /** `act` kind `evaluate` (arbitrary JavaScript in the page); false refuses it. */
    evaluateEnabled: z.boolean().default(true),
    /**
     * The same rules as `tools.web.fetch.ssrfPolicy`, applied to every navigation and to every
     * request a page makes (redirect hops included): private, loopback and metadata hosts are
     * refused unless listed or allowed here. Host names are resolved with
     * `tools.web.fetch.dnsResolverUrl`.
     */
    ssrfPolicy: z
      .object({
        dangerouslyAllowPrivateNetwork: z.boolean().default(false),
        allowedHostnames: z.array(z.string()).default([]),
        allowRfc2544BenchmarkRange: z.boolean().default(false),
        allowIpv6UniqueLocalRange: z.boolean().default(false),
      })
      .prefault({}),
    tabCleanup: z
      .object({
        /** Close the session's tabs (and its Browser Run session) once it has been idle `idleMinutes`. */
        enabled: z.boolean().default(true),
        /**
         * edgeclaw: minutes without a browser call before the tabs are closed. Browser Run bills
         * the open time, so this tail is most of a turn's cost when the agent does not `stop`.
         */
        idleMinutes: z.number().positive().default(2),
      })
      .prefault({}),
    /**
     * `mode` "efficient": a snapshot shows only the interactive elements (with their refs) when a
     * call names no mode; unset, the whole tree.
     */
    snapshotDefaults: z.object({ mode: z.enum(["efficient", "full"]).optional() }).prefault({}),
    /**
     * edgeclaw: Browser Run's `keep_alive` for the session, in seconds — how long the hosted browser
     * stays up between calls with nobody connected (the platform allows 10 to 600).
     */
    keepAliveSeconds: z.number().int().min(10).max(600).default(120),
    /** edgeclaw: characters of a snapshot or page text the model sees. */
    maxSnapshotChars: z.number().int().positive().default(20_000),
    /** edgeclaw: one action's time limit (a click's wait, a navigation), in seconds. */
    actionTimeoutSeconds: z.number().positive().default(20),
    /** edgeclaw: tabs one session may hold open. */
    maxTabs: z.number().int().positive().default(8),
    /**
     * edgeclaw: browser time one session may use per UTC day, in seconds (the time its hosted
     * browser is open, which is what Browser Run bills); 0 = no cap.
     */
    maxSecondsPerSessionDay: z.number().int().nonnegative().default(3_600),
  })
  .loose()
  .prefault({});

export type BrowserConfig = z.infer<typeof browserSchema>;
