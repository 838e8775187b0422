import * as z from "zod";

/**
 * `tools.loopDetection` per tools/loop-detection: the rolling-history detector, off by default as
 * in OpenClaw. Thresholds count calls within the last `historySize` tool calls of one run.
 */
const detectorsSchema = z
  .object({
    /** The same tool with the same arguments, whatever it returned: warns only. */
    genericRepeat: z.boolean().default(true),
    /** A polling call (process poll/log) that keeps returning the same thing: warns, then blocks. */
    knownPollNoProgress: z.boolean().default(true),
    /** Two calls alternating with unchanged results: warns, then blocks. */
    pingPong: z.boolean().default(true),
  })
  .strict()
  .prefault({});

export const loopDetectionSchema = z
  .object({
    enabled: z.boolean().default(false),
    historySize: z.number().int().min(2).max(200).default(30),
    warningThreshold: z.number().int().min(2).default(10),
    criticalThreshold: z.number().int().min(3).default(20),
    /** Any call repeated with the same arguments and the same result this often blocks, whatever the detectors say. */
    globalCircuitBreakerThreshold: z.number().int().min(3).default(30),
    detectors: detectorsSchema,
  })
  .strict()
  .refine((c) => c.warningThreshold < c.criticalThreshold, {
    message: "warningThreshold must be below criticalThreshold",
  })
  .prefault({});

/** `agents.list[].tools.loopDetection`: any of the keys, over the global block. */
export const loopDetectionOverrideSchema = z
  .object({
    enabled: z.boolean().optional(),
    historySize: z.number().int().min(2).max(200).optional(),
    warningThreshold: z.number().int().min(2).optional(),
    criticalThreshold: z.number().int().min(3).optional(),
    globalCircuitBreakerThreshold: z.number().int().min(3).optional(),
    detectors: z
      .object({
        genericRepeat: z.boolean().optional(),
        knownPollNoProgress: z.boolean().optional(),
        pingPong: z.boolean().optional(),
      })
      .strict()
      .optional(),
  })
  .strict();

export type LoopDetectionConfig = z.infer<typeof loopDetectionSchema>;
export type LoopDetectionOverride = z.infer<typeof loopDetectionOverrideSchema>;

/** The settings one agent's runs use: its own block over the global one. */
export function loopDetectionFor(
  global: LoopDetectionConfig,
  override: LoopDetectionOverride | undefined,
): LoopDetectionConfig {
  if (!override) return global;
  return {
    ...global,
    ...override,
    detectors: { ...global.detectors, ...override.detectors },
  };
}

/**
 * One agent's loop detection: `agents.list[].tools.loopDetection` or OpenClaw's spelling
 * `agents.entries.<id>.tools.loopDetection` (validated here, as the entries record is read
 * elsewhere), over `tools.loopDetection`.
 */
export function agentLoopDetection(
  config: {
    tools: { loopDetection: LoopDetectionConfig };
    agents: { list: { id: string; tools?: { loopDetection?: LoopDetectionOverride } }[] };
  },
  agentId: string,
): LoopDetectionConfig {
  const listed = config.agents.list.find((entry) => entry.id === agentId)?.tools?.loopDetection;
  if (listed) return loopDetectionFor(config.tools.loopDetection, listed);
  const entries = (config.agents as { entries?: Record<string, unknown> }).entries;
  const entry = entries?.[agentId] as { tools?: { loopDetection?: unknown } } | undefined;
  const parsed = loopDetectionOverrideSchema.safeParse(entry?.tools?.loopDetection);
  return loopDetectionFor(config.tools.loopDetection, parsed.success ? parsed.data : undefined);
}
