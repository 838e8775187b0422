import * as z from "zod";
import { secretInputSchema } from "./secret-ref.ts";

/**
 * `skills` per tools/skills-config: the prompt budget and the per-skill entries. Skills come from
 * the agent's workspace (`skills/`, `.agents/skills/`, seeded from the workspace seed folder); the
 * host-side roots (`skills.load.extraDirs`, `~/.agents/skills`) do not exist in a Worker, so their
 * keys stay known-but-unused (functions/config/openclaw-keys.ts).
 */
export const skillEntrySchema = z
  .object({
    enabled: z.boolean().optional(),
    /** Counts as the skill's `primaryEnv` for `requires.env` gating. */
    apiKey: secretInputSchema.optional(),
    /** Names listed here count as present for `requires.env` gating. */
    env: z.record(z.string(), z.string()).optional(),
  })
  .loose();

export const skillsSchema = z
  .object({
    limits: z
      .object({
        /** Characters of the `<available_skills>` catalog in the system prompt (OpenClaw's documented 18000). */
        maxSkillsPromptChars: z.number().int().positive().default(18_000),
      })
      .loose()
      .prefault({}),
    entries: z.record(z.string(), skillEntrySchema).default({}),
  })
  .loose()
  .prefault({});

/** `agents.defaults.skills` / `agents.list[].skills`: an allowlist of skill names (`[]`: none). */
export const skillAllowlistSchema = z.array(z.string().min(1)).optional();

export const agentSkillsLimitsSchema = z
  .object({ maxSkillsPromptChars: z.number().int().positive().optional() })
  .strict()
  .optional();

export type SkillsConfig = z.infer<typeof skillsSchema>;
