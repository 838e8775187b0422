import { channelAccessSchema } from "../config/channel-access.ts";
import { ConfigError } from "../config/load.ts";
import { gatewayConfigSchema, parseConfig } from "../channels/gateway-config.ts";
import type { EdgeclawConfig } from "../config/schema.ts";
import { findUnknownKeys } from "../config/unknown-keys.ts";
import { listAgents, knownAgentIds } from "./agents.ts";
import { compileMentionPatterns } from "./mention.ts";
import { normalizeAgentId } from "./ids.ts";
import {
  describeMissing,
  missingCredentials,
  notServedLines,
} from "../channels/credential-check.ts";
import { unpricedModelWarnings } from "../agent/unpriced-models.ts";
import { authProfileWarnings } from "../agent/auth-profiles/view.ts";

/**
 * `config check`: validates a config the way the gateway will read it and lists what would silently
 * misbehave (bindings to unknown agents, unknown access groups, bad mention patterns, USD caps over
 * models with no price, an enabled channel account this Worker does not serve or whose credentials
 * `env` lacks). Errors make the config unusable; warnings do not. `env` is the environment the
 * Worker runs with (the gateway's own, or the shell for a local file).
 */
export interface ConfigCheckReport {
  ok: boolean;
  errors: string[];
  warnings: string[];
}

export function checkConfig(raw: unknown, env: Record<string, unknown> = {}): ConfigCheckReport {
  // Typos are errors, OpenClaw keys not implemented here warnings (unknown-keys.ts).
  const unknown = findUnknownKeys(raw, gatewayConfigSchema());
  let config: EdgeclawConfig;
  try {
    config = parseConfig(raw);
  } catch (error) {
    if (error instanceof ConfigError)
      return {
        ok: false,
        errors: [...error.issues, ...unknown.errors],
        warnings: unknown.warnings,
      };
    throw error;
  }
  const errors: string[] = [...unknown.errors];
  const warnings: string[] = [...unknown.warnings];

  for (const [channel, block] of Object.entries(config.channels)) {
    const parsed = channelAccessSchema.safeParse(block ?? {});
    if (!parsed.success) {
      for (const issue of parsed.error.issues)
        errors.push(
          `channels.${channel}${issue.path.length ? `.${issue.path.join(".")}` : ""}: ${issue.message}`,
        );
      continue;
    }
    for (const list of [parsed.data.allowFrom, parsed.data.groupAllowFrom ?? []]) {
      for (const entry of list) {
        const group = /^accessGroup:(.+)$/i.exec(entry)?.[1];
        if (group && !config.accessGroups[group])
          warnings.push(
            `channels.${channel}: ${entry} names no accessGroups entry, so it admits nobody`,
          );
      }
    }
  }

  // Each channel declares what its accounts need (functions/channels/<id>/credentials.ts).
  warnings.push(...notServedLines(config));
  warnings.push(...missingCredentials(config, env).map(describeMissing));
  warnings.push(...unpricedModelWarnings(config, env));
  warnings.push(...authProfileWarnings(config, env));

  const agents = knownAgentIds(config);
  config.bindings.forEach((binding, index) => {
    if (!agents.has(normalizeAgentId(binding.agentId))) {
      warnings.push(
        `bindings[${index}]: agent "${binding.agentId}" is not configured; the binding is ignored`,
      );
    }
  });
  const defaults = listAgents(config).filter((agent) => agent.default);
  if (defaults.length > 1)
    warnings.push(
      `agents: ${defaults.length} agents are marked default; the first (${defaults[0]!.id}) is used`,
    );

  const patterns = [
    ...(config.messages.groupChat.mentionPatterns ?? []),
    ...listAgents(config).flatMap((agent) => agent.mentionPatterns ?? []),
  ];
  const usable = compileMentionPatterns(patterns).length;
  if (usable < patterns.length)
    warnings.push(
      `${patterns.length - usable} mention pattern(s) are invalid or unsafe and will be ignored`,
    );

  const auth = config.gateway.auth;
  const hasToken =
    auth.token !== undefined ||
    typeof env.EDGECLAW_GATEWAY_TOKEN === "string" ||
    typeof env.OPENCLAW_GATEWAY_TOKEN === "string";
  if (auth.mode !== "none" && auth.mode !== "password" && !hasToken) {
    warnings.push(
      "gateway.auth: no token configured (gateway.auth.token or EDGECLAW_GATEWAY_TOKEN): every operator request is refused",
    );
  }
  return { ok: errors.length === 0, errors, warnings };
}
