import * as z from "zod";
import { secretInputSchema } from "./secret-ref.ts";

/**
 * `tools.exec.*` (tools__exec.md, gateway__background-process.md, tools__exec-approvals.md) and
 * `agents.defaults.sandbox.*` (gateway__sandboxing.md), with OpenClaw's names and defaults. Where
 * edgeclaw differs (it has no unsandboxed gateway host, and Postgres is the workspace's record)
 * the key says so; docs/sandbox.md has the whole picture.
 */

export const execSecuritySchema = z.enum(["deny", "allowlist", "full"]);
export const execAskSchema = z.enum(["off", "on-miss", "always"]);

export const execSchema = z
  .object({
    /** The normalised switch: deny | allowlist | ask (allowlist + on-miss) | full; wins over security/ask. */
    mode: z.enum(["deny", "allowlist", "ask", "full"]).optional(),
    /** Inside the sandbox the sandbox is the boundary, so commands run without approval by default. */
    security: execSecuritySchema.default("full"),
    ask: execAskSchema.default("off"),
    /** Command names (globs) that run under security "allowlist" without asking. */
    allowlist: z.array(z.string().min(1)).default([]),
    /** stdin-only filters (cut, head, tail, tr, wc, …) allowed without an allowlist entry. */
    safeBins: z.array(z.string().min(1)).default([]),
    /** Default per-command timeout in seconds; a call's timeoutSeconds overrides it, 0 disables it. */
    timeoutSeconds: z.number().int().nonnegative().default(1800),
    /** Default yieldMs: how long exec waits before the command continues in the background. */
    backgroundMs: z
      .number()
      .int()
      .positive()
      .default(10_000)
      .transform((ms) => Math.min(120_000, Math.max(10, ms))),
    /** How long a finished background command stays listed (1 minute to 3 hours). */
    cleanupMs: z
      .number()
      .int()
      .positive()
      .default(1_800_000)
      .transform((ms) => Math.min(3 * 3_600_000, Math.max(60_000, ms))),
    /** A background command's end becomes one system event and wakes the session. */
    notifyOnExit: z.boolean().default(true),
    /** Also for a background command that succeeded without output. */
    notifyOnExitEmptySuccess: z.boolean().default(false),
    /** Output a command keeps (OPENCLAW_BASH_MAX_OUTPUT_CHARS), 1000–200000. */
    maxOutputChars: z
      .number()
      .int()
      .positive()
      .default(200_000)
      .transform((n) => Math.min(200_000, Math.max(1000, n))),
    /** Output one exec/poll result shows (OPENCLAW_BASH_PENDING_MAX_OUTPUT_CHARS), 1000–200000. */
    pendingMaxOutputChars: z
      .number()
      .int()
      .positive()
      .default(30_000)
      .transform((n) => Math.min(200_000, Math.max(1000, n))),
    /** Directories put in front of PATH inside the sandbox. */
    pathPrepend: z.array(z.string().min(1)).default([]),
    /**
     * edgeclaw: exec and process are the owner's (commands.ownerAllowFrom) unless this is true; then
     * every sender the channel's access policy lets in may run commands — strangers in an open group
     * included. Off by default: a stranger never reaches exec unless the operator says so here.
     */
    allowNonOwners: z.boolean().default(false),
    applyPatch: z
      .object({
        enabled: z.boolean().default(true),
        /** Always true here: the workspace is the only place apply_patch can write. */
        workspaceOnly: z.boolean().default(true),
        /** Model ids (`gpt-5.4` or `openai/gpt-5.4`) that get the tool; unset = every model. */
        allowModels: z.array(z.string().min(1)).optional(),
      })
      .loose()
      .prefault({}),
  })
  .loose()
  .prefault({});
export type ExecConfig = z.infer<typeof execSchema>;

export const sandboxSchema = z
  .object({
    /**
     * When commands are sandboxed: "non-main" (default) and "all" both run every command in the
     * sandbox; under "non-main" every session but the agent's main one gets a sandbox of its own
     * (scope "session") with no network whatever `scope`/`docker.network` say. "off" runs commands
     * on the companion's host without isolation: an explicit opt-in, never a fallback.
     */
    mode: z.enum(["off", "non-main", "all"]).default("non-main"),
    scope: z.enum(["agent", "session", "shared"]).default("agent"),
    /**
     * What of the workspace (Postgres) the sandbox sees at /workspace: "rw" (edgeclaw's default)
     * synced in before a command and back after it; "ro" synced in only; "none" an empty scratch.
     */
    workspaceAccess: z.enum(["none", "ro", "rw"]).default("rw"),
    /**
     * Where commands run: "companion" (bubblewrap on the companion's machine: `npm run dev`,
     * self-hosted) or "container" (a Cloudflare Container per scope). Unset: no exec/process tools.
     */
    backend: z.enum(["companion", "container"]).optional(),
    docker: z
      .object({
        /** The image `npm run deploy` builds for the container backend. */
        image: z.string().default("./sandbox/Dockerfile"),
        /** The only variables a command gets besides PATH/HOME/LANG: secrets never enter otherwise. */
        env: z.record(z.string(), secretInputSchema).default({}),
        /** "none" (default): no egress. "bridge": egress, limited to `allowedHosts` when set. */
        network: z.enum(["none", "bridge"]).default("none"),
        /** edgeclaw (container backend): the hosts a command may reach when network is "bridge". */
        allowedHosts: z.array(z.string().min(1)).default([]),
        /** Run once in a new sandbox before its first command (sh -lc). */
        setupCommand: z.string().optional(),
      })
      .loose()
      .prefault({}),
    prune: z
      .object({
        /** OpenClaw's key; accepted. The container sleeps after `container.sleepAfter` instead. */
        idleHours: z.number().positive().default(24),
      })
      .loose()
      .prefault({}),
    /**
     * edgeclaw, backend "container" (Cloudflare Containers): one container per scope, from
     * `docker.image`. Read from agents.defaults only: one container class serves every agent.
     */
    container: z
      .object({
        /** Containers instance type (lite, basic, standard-1 … standard-4); basic: ¼ vCPU, 1 GiB, 4 GB disk. */
        instanceType: z.string().min(1).default("basic"),
        /** How many sandbox containers may run at once (scopes awake at the same time). */
        maxInstances: z.number().int().positive().default(10),
        /**
         * An idle sandbox stops after this long ("30s", "10m", "1h"): billing stops, its disk is
         * gone (the workspace comes back from Postgres). Never while a command runs.
         */
        sleepAfter: z
          .string()
          .regex(/^\d+[smh]$/, 'a duration like "30s", "10m" or "1h"')
          .default("10m"),
      })
      .loose()
      .prefault({}),
    /** edgeclaw: bounds of the workspace sync per command, both ways. */
    sync: z
      .object({
        maxFiles: z.number().int().positive().default(500),
        maxBytes: z
          .number()
          .int()
          .positive()
          .default(8 * 1024 * 1024),
      })
      .loose()
      .prefault({}),
  })
  .loose()
  .prefault({});
export type SandboxConfig = z.infer<typeof sandboxSchema>;
