import { z } from "zod";

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
        /** edgeclaw: minutes without a browser call before the tabs are closed. */
        idleMinutes: z.number().positive().default(10),
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
    keepAliveSeconds: z.number().int().min(10).max(600).default(600),
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
