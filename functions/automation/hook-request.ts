import * as z from "zod";
import type { EdgeclawConfig } from "../config/schema.ts";
import type { HookMapping } from "../config/automation-schema.ts";
import type { ReplyRoute } from "../core/envelope.ts";
import { adapterFor } from "../channels/registry.ts";
import { defaultAgentId, knownAgentIds } from "../routing/agents.ts";
import { effectiveHookMappings } from "./hook-presets.ts";

/**
 * What an inbound hook asks for (automation/cron-jobs "Webhook", gateway/configuration "hooks"):
 * `/hooks/wake` queues a system event for an agent's main session, `/hooks/agent` runs an agent
 * turn, `/hooks/<name>` is resolved through `hooks.mappings` (templates read the JSON body). Pure:
 * the Worker (workers/hooks.ts) authenticates, caps and stores; this decides and validates.
 */

const wakeBody = z.object({
  text: z.string().min(1).max(20_000),
  mode: z.enum(["now", "next-heartbeat"]).optional(),
  agentId: z.string().max(64).optional(),
});

const agentBody = z.object({
  message: z.string().min(1).max(100_000),
  name: z.string().max(120).optional(),
  agentId: z.string().max(64).optional(),
  sessionKey: z.string().max(200).optional(),
  sessionMode: z.enum(["isolated", "persistent"]).optional(),
  idempotencyKey: z.string().min(1).max(256).optional(),
  wakeMode: z.enum(["now", "next-heartbeat"]).optional(),
  deliver: z.boolean().optional(),
  channel: z.string().max(64).optional(),
  to: z.string().max(256).optional(),
  accountId: z.string().max(64).optional(),
  model: z
    .string()
    .regex(/^[^/\s]+\/\S+$/)
    .optional(),
  thinking: z.string().optional(),
  timeoutSeconds: z.number().int().positive().max(86_400).optional(),
});

export type HookAction =
  | { kind: "wake"; agentId: string; text: string; now: boolean }
  | {
      kind: "agent";
      agentId: string;
      message: string;
      name: string;
      /** The session key the caller asked for (persistent mode), or undefined for a fresh one. */
      sessionKey?: string;
      route: ReplyRoute | null;
      model?: string;
      timeoutSeconds?: number;
      idempotencyKey?: string;
    };

export type HookDecision =
  | { ok: true; action: HookAction }
  | { ok: false; status: 400 | 404; error: string };

export function decideHook(config: EdgeclawConfig, name: string, body: unknown): HookDecision {
  if (name === "wake") return decideWake(config, body);
  if (name === "agent") return decideAgent(config, body, undefined);
  const mapping = effectiveHookMappings(config.hooks.mappings, config.hooks.presets).find(
    (candidate) => candidate.match.path === name,
  );
  if (!mapping)
    return { ok: false, status: 404, error: `no hook named "${name}" (hooks.mappings)` };
  return decideMapping(config, mapping, body);
}

function decideWake(config: EdgeclawConfig, body: unknown): HookDecision {
  const parsed = wakeBody.safeParse(body);
  if (!parsed.success) return invalid(parsed.error);
  const agentId = pickAgent(config, parsed.data.agentId);
  if (!agentId.ok) return agentId;
  return {
    ok: true,
    action: {
      kind: "wake",
      agentId: agentId.id,
      text: parsed.data.text,
      now: parsed.data.mode === "now",
    },
  };
}

function decideAgent(
  config: EdgeclawConfig,
  body: unknown,
  fixedSessionKey: string | undefined,
): HookDecision {
  const parsed = agentBody.safeParse(body);
  if (!parsed.success) return invalid(parsed.error);
  const request = parsed.data;
  const agentId = pickAgent(config, request.agentId);
  if (!agentId.ok) return agentId;
  const { hooks } = config;
  if (request.sessionKey !== undefined) {
    if (!hooks.allowRequestSessionKey)
      return {
        ok: false,
        status: 400,
        error: "sessionKey is not accepted (hooks.allowRequestSessionKey is false)",
      };
    const prefixes = hooks.allowedSessionKeyPrefixes ?? [];
    if (prefixes.length && !prefixes.some((prefix) => request.sessionKey!.startsWith(prefix))) {
      return {
        ok: false,
        status: 400,
        error: "sessionKey does not match hooks.allowedSessionKeyPrefixes",
      };
    }
  }
  if (
    request.sessionMode === "persistent" &&
    (!request.sessionKey || !(hooks.allowedSessionKeyPrefixes ?? []).length)
  ) {
    return {
      ok: false,
      status: 400,
      error:
        "sessionMode persistent needs an explicit sessionKey, hooks.allowRequestSessionKey and hooks.allowedSessionKeyPrefixes",
    };
  }
  // No key at all: a fresh isolated session per call (or per idempotency key).
  const sessionKey = request.sessionKey ?? fixedSessionKey ?? hooks.defaultSessionKey;
  const route = deliveryRoute(config, request);
  if (!route.ok) return route;
  return {
    ok: true,
    action: {
      kind: "agent",
      agentId: agentId.id,
      message: request.message,
      name: request.name ?? "Hook",
      sessionKey,
      route: route.route,
      model: request.model,
      timeoutSeconds: request.timeoutSeconds,
      idempotencyKey: request.idempotencyKey,
    },
  };
}

function decideMapping(config: EdgeclawConfig, mapping: HookMapping, body: unknown): HookDecision {
  const template =
    mapping.action === "wake"
      ? (mapping.textTemplate ?? mapping.messageTemplate)
      : (mapping.messageTemplate ?? mapping.textTemplate);
  const text = template ? renderTemplate(template, body) : JSON.stringify(body);
  if (mapping.action === "wake")
    return decideWake(config, { text, mode: mapping.wakeMode, agentId: mapping.agentId });
  // A templated session key is the caller's value: the same opt-in and prefixes as a requested key apply.
  const templatedKey = mapping.sessionKey?.includes("{{")
    ? renderTemplate(mapping.sessionKey, body)
    : undefined;
  return decideAgent(
    config,
    {
      message: text,
      name: mapping.name,
      agentId: mapping.agentId,
      ...(templatedKey !== undefined ? { sessionKey: templatedKey } : {}),
      deliver: mapping.deliver,
      channel: mapping.channel,
      to: mapping.to,
      accountId: mapping.accountId,
      model: mapping.model,
      timeoutSeconds: mapping.timeoutSeconds,
    },
    templatedKey === undefined ? mapping.sessionKey : undefined,
  );
}

/** Delivery needs both channel and to (one alone is a 400); deliver:false ignores them; none = run only. */
function deliveryRoute(
  config: EdgeclawConfig,
  request: z.infer<typeof agentBody>,
): { ok: true; route: ReplyRoute | null } | { ok: false; status: 400; error: string } {
  if (request.deliver === false) return { ok: true, route: null };
  const { channel, to } = request;
  if (!channel && !to) return { ok: true, route: null };
  if (!channel || !to)
    return { ok: false, status: 400, error: "delivery needs both channel and to" };
  if (!adapterFor(channel))
    return { ok: false, status: 400, error: `unknown delivery channel "${channel}"` };
  const accountId = request.accountId ?? "default";
  const channelConfig = (
    config.channels as Record<string, { accounts?: Record<string, unknown> } | undefined>
  )[channel];
  if (request.accountId && !channelConfig?.accounts?.[accountId])
    return { ok: false, status: 400, error: `unknown account "${accountId}" on ${channel}` };
  return { ok: true, route: { channel, accountId, to } };
}

/** hooks.allowedAgentIds ("*"/absent = all, [] = none); an unknown id falls back to the default agent. */
function pickAgent(
  config: EdgeclawConfig,
  requested: string | undefined,
): { ok: true; id: string } | { ok: false; status: 400; error: string } {
  const known = knownAgentIds(config);
  const wanted = requested?.toLowerCase();
  const id = wanted && known.has(wanted) ? wanted : defaultAgentId(config);
  const allowed = config.hooks.allowedAgentIds;
  if (allowed && !allowed.includes("*") && !allowed.map((a) => a.toLowerCase()).includes(id)) {
    return {
      ok: false,
      status: 400,
      error: `agent "${id}" is not allowed for hooks (hooks.allowedAgentIds)`,
    };
  }
  return { ok: true, id };
}

/** `{{messages[0].subject}}` → the value at that path of the body ("" when absent). */
export function renderTemplate(template: string, body: unknown): string {
  return template.replace(/\{\{\s*([^}]+?)\s*\}\}/g, (_whole, path: string) => {
    let value: unknown = body;
    for (const part of path
      .replace(/\[(\d+)\]/g, ".$1")
      .split(".")
      .filter(Boolean)) {
      if (value === null || typeof value !== "object") return "";
      value = (value as Record<string, unknown>)[part];
    }
    if (value === undefined || value === null) return "";
    return typeof value === "string" ? value : JSON.stringify(value);
  });
}

function invalid(error: z.ZodError): { ok: false; status: 400; error: string } {
  return {
    ok: false,
    status: 400,
    error: error.issues
      .map((issue) => `${issue.path.join(".") || "body"}: ${issue.message}`)
      .join("; "),
  };
}
