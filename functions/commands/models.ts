import * as z from "zod";
import type { EdgeclawConfig } from "../config/schema.ts";

/**
 * Model choices for /model and /new: configured provider models, the agents' model refs, and
 * aliases from `agents.defaults.models.<ref>.alias`. A pick may be a number from the list, an alias,
 * an exact `provider/model`, or a fuzzy fragment that matches exactly one listed model.
 */
const aliasesView = z
  .object({
    models: z.record(z.string(), z.object({ alias: z.string().optional() }).loose()).optional(),
  })
  .loose();
const MODEL_REF = /^[^/\s]+\/\S+$/;

export function modelChoices(config: EdgeclawConfig): string[] {
  const refs = new Set<string>();
  const add = (ref: string | undefined) => {
    if (ref && MODEL_REF.test(ref)) refs.add(ref);
  };
  add(config.agents.defaults.model.primary);
  config.agents.defaults.model.fallbacks.forEach(add);
  for (const agent of config.agents.list) {
    add(agent.model?.primary);
    agent.model?.fallbacks.forEach(add);
  }
  for (const [provider, entry] of Object.entries(config.models.providers)) {
    for (const model of entry.models) add(`${provider}/${model.id}`);
  }
  const aliases = aliasesView.safeParse(config.agents.defaults);
  for (const ref of Object.keys(aliases.success ? (aliases.data.models ?? {}) : {})) add(ref);
  return [...refs];
}

export function modelAliases(config: EdgeclawConfig): Map<string, string> {
  const aliases = new Map<string, string>();
  const parsed = aliasesView.safeParse(config.agents.defaults);
  for (const [ref, entry] of Object.entries(parsed.success ? (parsed.data.models ?? {}) : {})) {
    if (entry.alias) aliases.set(entry.alias.toLowerCase(), ref);
  }
  return aliases;
}

export type ModelPick = { ok: true; ref: string } | { ok: false; reason: string };

export function resolveModelPick(config: EdgeclawConfig, input: string): ModelPick {
  const choices = modelChoices(config);
  const token = input.trim();
  if (/^\d+$/.test(token)) {
    const ref = choices[Number(token) - 1];
    return ref
      ? { ok: true, ref }
      : { ok: false, reason: `no model #${token}; send /model to see the list` };
  }
  const alias = modelAliases(config).get(token.toLowerCase());
  if (alias) return { ok: true, ref: alias };
  if (MODEL_REF.test(token)) return { ok: true, ref: token };
  const fuzzy = choices.filter((ref) => ref.toLowerCase().includes(token.toLowerCase()));
  if (fuzzy.length === 1) return { ok: true, ref: fuzzy[0]! };
  if (fuzzy.length > 1)
    return { ok: false, reason: `"${token}" matches several models: ${fuzzy.join(", ")}` };
  return {
    ok: false,
    reason: `unknown model "${token}"; use provider/model or send /model for the list`,
  };
}

/** For the parser: could this token be a model pick? */
export function isModelToken(config: EdgeclawConfig, token: string): boolean {
  return resolveModelPick(config, token).ok;
}
