import type { EdgeclawConfig } from "../../functions/config/schema.ts";

export const NO_MODEL_MESSAGE =
  "No model configured: replies will say so until you set ANTHROPIC_API_KEY / OPENAI_API_KEY / models.providers, " +
  "or EDGECLAW_FAKE_MODEL=1 for the scripted demo model";

/** True when nothing could answer a chat: no model in the config, no provider key, no demo fake. */
export function noModelConfigured(config: EdgeclawConfig, vars: Record<string, string>): boolean {
  if (vars.EDGECLAW_FAKE_MODEL === "1") return false;
  if (vars.ANTHROPIC_API_KEY || vars.OPENAI_API_KEY) return false;
  if (Object.keys(config.models.providers).length > 0) return false;
  if (config.agents.defaults.model.primary) return false;
  return !config.agents.list.some((agent) => agent.model?.primary);
}
