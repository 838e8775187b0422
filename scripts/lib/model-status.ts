import {
  modelSelectionFor,
  parseModelRef,
  resolveModel,
} from "../../functions/agent/model-resolve.ts";
import type { EdgeclawConfig } from "../../functions/config/schema.ts";
import { defaultAgentId } from "../../functions/routing/agents.ts";

export const NO_MODEL_MESSAGE =
  "No model configured: replies will say so until you set ANTHROPIC_API_KEY / OPENAI_API_KEY / GEMINI_API_KEY / models.providers, " +
  "or EDGECLAW_FAKE_MODEL=1 for the scripted demo model";

/**
 * The banner's model line: the model that answers the default agent, and why it is that one. The
 * Worker decides with the same function (modelSelectionFor), so the banner cannot disagree with it.
 */
export function activeModelLine(config: EdgeclawConfig, vars: Record<string, string>): string {
  const selection = modelSelectionFor(config, vars, defaultAgentId(config));
  const primary = selection.primary;
  if (!primary) return NO_MODEL_MESSAGE;
  const provider = parseModelRef(primary)?.providerId ?? primary;
  const why =
    selection.origin === "demo"
      ? `the scripted demo model, EDGECLAW_FAKE_MODEL=1${replacedByDemo(config)}`
      : selection.origin === "key-default"
        ? `default for the ${provider} API key; set agents.defaults.model.primary to choose another`
        : "from the config";
  let problem = "";
  try {
    resolveModel(config, vars, primary);
  } catch (error) {
    problem = ` — not usable: ${error instanceof Error ? error.message : String(error)}`;
  }
  const fallbacks = selection.fallbacks.length ? `, then ${selection.fallbacks.join(", ")}` : "";
  return `  Model: ${primary} (${why})${fallbacks}${problem}`;
}

/** The switch wins over the config's models: say which ones it stands in for, so nobody wonders. */
function replacedByDemo(config: EdgeclawConfig): string {
  const named = [
    config.agents.defaults.model.primary,
    ...config.agents.list.map((agent) => agent.model?.primary),
  ].filter((ref): ref is string => Boolean(ref));
  const unique = [...new Set(named)];
  return unique.length ? `; answers instead of ${unique.join(", ")} from the config` : "";
}
