import * as z from "zod";

/**
 * The companion's own settings, all from its environment (COMPANION.md "Companion process"): where
 * the Worker is, the key it signs with, the outbound key it accepts, its port and data directory,
 * and its bounds. Platform secrets are read later, by the env names each account names.
 */
const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);

export const companionSettingsSchema = z.object({
  EDGECLAW_WORKER_URL: z.url(),
  EDGECLAW_COMPANION_KEY_ID: z.string().min(1).default("k1"),
  /** Required unless EDGECLAW_COMPANION_SANDBOX_ONLY (checked in settingsFromEnv). */
  EDGECLAW_COMPANION_INGRESS_SECRET: z.string().min(1).optional(),
  /**
   * "1": the companion only runs the agent's exec sandbox (POST /v1/sandbox): no lease, no
   * accounts, no connectors, no call to the Worker (`npm run dev` with a sandbox and no socket account).
   */
  EDGECLAW_COMPANION_SANDBOX_ONLY: z
    .enum(["0", "1"])
    .default("0")
    .transform((flag) => flag === "1"),
  /** Accepts Worker → companion `/v1/outbound` signed under EDGECLAW_COMPANION_OUTBOUND_KEY_ID (default: the key id). Unset = /v1/outbound refuses everything. */
  EDGECLAW_COMPANION_OUTBOUND_SECRET: z.string().min(1).optional(),
  EDGECLAW_COMPANION_OUTBOUND_KEY_ID: z.string().min(1).optional(),
  /** A second outbound key during a rotation, as `id:secret`. */
  EDGECLAW_COMPANION_OUTBOUND_PREVIOUS: z
    .string()
    .regex(/^[^:]+:.+$/)
    .optional(),
  EDGECLAW_COMPANION_PORT: z.coerce.number().int().min(0).max(65535).default(8790),
  EDGECLAW_COMPANION_HOST: z.string().default("127.0.0.1"),
  EDGECLAW_COMPANION_DATA_DIR: z.string().min(1).default("./.edgeclaw/companion"),
  /** Stable id of this process for the lease (a restarted process is a new instance unless set). */
  EDGECLAW_COMPANION_INSTANCE_ID: z.string().min(1).optional(),
  /** Rows the local outbox holds before submit() refuses (back-pressure on the connectors). */
  EDGECLAW_COMPANION_OUTBOX_MAX_ROWS: positiveInt(10_000),
  /** Events per POST /internal/companion/events (the Worker's companion.maxEventsPerRequest bounds it too). */
  EDGECLAW_COMPANION_BATCH_MAX_EVENTS: positiveInt(100),
  /** Bytes per batch body (the Worker's companion.maxBodyBytes is 1 MiB by default). */
  EDGECLAW_COMPANION_BATCH_MAX_BYTES: positiveInt(512 * 1024),
  EDGECLAW_COMPANION_RETRY_MAX_MS: positiveInt(60_000),
  EDGECLAW_COMPANION_REQUEST_TIMEOUT_MS: positiveInt(30_000),
  EDGECLAW_COMPANION_STATUS_INTERVAL_MS: positiveInt(15_000),
  /** How long commandId → receipt is kept for /v1/outbound retries. */
  EDGECLAW_COMPANION_RECEIPT_TTL_MS: positiveInt(48 * 3600_000),
  /** Supervisor: unclean starts within the window that stop automatic restarts (the seed: 3 in 5 minutes). */
  EDGECLAW_COMPANION_CRASH_LOOP_STARTS: positiveInt(3),
  EDGECLAW_COMPANION_CRASH_LOOP_WINDOW_MS: positiveInt(5 * 60_000),
  /** Graceful stop: how long SIGTERM waits for the outbox to drain. */
  EDGECLAW_COMPANION_DRAIN_MS: positiveInt(10_000),
});

export type CompanionSettings = z.infer<typeof companionSettingsSchema>;

export function settingsFromEnv(env: Record<string, string | undefined>): CompanionSettings {
  const parsed = companionSettingsSchema.safeParse(env);
  if (
    parsed.success &&
    !parsed.data.EDGECLAW_COMPANION_SANDBOX_ONLY &&
    !parsed.data.EDGECLAW_COMPANION_INGRESS_SECRET
  )
    throw new Error(
      "companion settings: EDGECLAW_COMPANION_INGRESS_SECRET: required (the key the companion signs its events with), unless EDGECLAW_COMPANION_SANDBOX_ONLY=1",
    );
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues
    .map((issue) => `${issue.path.join(".")}: ${issue.message}`)
    .join("; ");
  throw new Error(`companion settings: ${problems}`);
}
