import type { EdgeclawConfig } from "../../functions/config/schema.ts";
import { invalidRequest, notFound } from "./errors.ts";

/**
 * Which agent and which session an HTTP API request belongs to, following OpenClaw's
 * agent-first model contract: `model` names an agent target, never a provider model.
 */

/** The agent ids the gateway knows: `agents.list`, or the implicit `main` when the list is empty. */
export function knownAgentIds(config: EdgeclawConfig): string[] {
  const ids = config.agents.list.map((agent) => agent.id.toLowerCase());
  return ids.length ? ids : ["main"];
}

/** The agent with `default: true`, else the first listed, else `main`. */
export function defaultAgentId(config: EdgeclawConfig): string {
  const list = config.agents.list;
  return (list.find((agent) => agent.default) ?? list[0])?.id.toLowerCase() ?? "main";
}

/** The ids GET /v1/models lists: the top-level agent targets, not provider models. */
export function agentTargetIds(config: EdgeclawConfig): string[] {
  return ["openclaw", "openclaw/default", ...knownAgentIds(config).map((id) => `openclaw/${id}`)];
}

/**
 * Maps a `model` value to an agent id: `openclaw` and `openclaw/default` → the default agent;
 * `openclaw/<id>`, `openclaw:<id>` and `agent:<id>` → that agent. Anything else (a provider model
 * name sent by habit) is not a target this gateway serves → 404.
 */
export function agentIdFromModel(model: string, config: EdgeclawConfig): string {
  const value = model.trim();
  const lower = value.toLowerCase();
  if (lower === "openclaw" || lower === "openclaw/default" || lower === "openclaw:default")
    return defaultAgentId(config);
  const match = /^(?:openclaw[/:]|agent:)(.+)$/i.exec(value);
  if (!match) {
    throw notFound(
      `The model \`${value}\` does not exist. Use openclaw, openclaw/default or openclaw/<agentId> (GET /v1/models lists them).`,
      "model_not_found",
      "model",
    );
  }
  return requireKnownAgent(match[1]!, config, "model");
}

export function requireKnownAgent(agentId: string, config: EdgeclawConfig, param: string): string {
  const id = agentId.trim().toLowerCase();
  if (!knownAgentIds(config).includes(id)) {
    throw notFound(
      `Unknown agent \`${agentId.trim()}\`. Known agents: ${knownAgentIds(config).join(", ")}`,
      "agent_not_found",
      param,
    );
  }
  return id;
}

/** `x-openclaw-agent-id` wins over `model` (OpenClaw's compatibility override). */
export function resolveAgentId(
  model: string,
  agentHeader: string | undefined,
  config: EdgeclawConfig,
): string {
  const fromHeader = agentHeader?.trim();
  if (fromHeader) return requireKnownAgent(fromHeader, config, "x-openclaw-agent-id");
  return agentIdFromModel(model, config);
}

const RESERVED_SESSION_NAMESPACES = ["subagent:", "cron:", "acp:"];

export interface SessionTarget {
  agentId: string;
  sessionKey: string;
  /** False when the request gets a fresh session of its own (no `user`, no session header). */
  persistent: boolean;
}

/**
 * The session key, as OpenClaw derives it for its HTTP APIs:
 * - `x-openclaw-session-key`: used as given (`agent:<id>:<rest>`, or a bare key scoped to the
 *   resolved agent); the internal namespaces `subagent:`, `cron:` and `acp:` are refused;
 * - `user`: `agent:<agentId>:openai-user:<user>`, stable across calls;
 * - neither: `agent:<agentId>:openai:<uuid>`, a new session per request.
 * Keys are lower-cased, as OpenClaw normalises them.
 */
export function resolveSessionTarget(params: {
  agentId: string;
  user: string | undefined;
  sessionKeyHeader: string | undefined;
  config: EdgeclawConfig;
  newId?: () => string;
}): SessionTarget {
  const explicit = params.sessionKeyHeader?.trim();
  if (explicit) return explicitSessionTarget(explicit, params.agentId, params.config);
  const user = params.user?.trim();
  if (user)
    return {
      agentId: params.agentId,
      sessionKey: `agent:${params.agentId}:openai-user:${user}`.toLowerCase(),
      persistent: true,
    };
  const id = (params.newId ?? (() => crypto.randomUUID()))();
  return {
    agentId: params.agentId,
    sessionKey: `agent:${params.agentId}:openai:${id}`.toLowerCase(),
    persistent: false,
  };
}

function explicitSessionTarget(
  raw: string,
  agentId: string,
  config: EdgeclawConfig,
): SessionTarget {
  const param = "x-openclaw-session-key";
  if (raw.length > 400 || /[\s\u0000-\u001f\u007f]/.test(raw)) {
    throw invalidRequest(
      "x-openclaw-session-key must be at most 400 characters without whitespace",
      param,
      "invalid_session_key",
    );
  }
  const key = raw.toLowerCase();
  let owner = agentId;
  let rest = key;
  if (key.startsWith("agent:")) {
    const match = /^agent:([^:]+):(.+)$/.exec(key);
    if (!match)
      throw invalidRequest(
        "x-openclaw-session-key must look like agent:<agentId>:<key>",
        param,
        "invalid_session_key",
      );
    owner = requireKnownAgent(match[1]!, config, param);
    rest = match[2]!;
  }
  if (RESERVED_SESSION_NAMESPACES.some((prefix) => rest.startsWith(prefix))) {
    throw invalidRequest(
      `x-openclaw-session-key uses a reserved internal namespace (${RESERVED_SESSION_NAMESPACES.join(", ")})`,
      param,
      "reserved_session_key",
    );
  }
  return { agentId: owner, sessionKey: `agent:${owner}:${rest}`, persistent: true };
}
