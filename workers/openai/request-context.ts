import type { Context } from "hono";
import type { RoutedEvent } from "../../durable-objects/session-api.ts";
import { configFromEnv } from "../../functions/channels/gateway-config.ts";
import type { EdgeclawConfig } from "../../functions/config/schema.ts";
import {
  inboundEnvelopeSchema,
  type InboundAttachment,
  type InboundEnvelope,
} from "../../functions/core/envelope.ts";
import { createLogger } from "../../functions/logging/logger.ts";
import type { Env } from "../env.ts";
import { OpenAIHttpError, invalidRequest } from "./errors.ts";
import { resolveAgentId, resolveSessionTarget, type SessionTarget } from "./target.ts";

/**
 * What every endpoint of the OpenAI-compatible API reads from a request the same way: the agent
 * and session it belongs to, the synthetic ingress channel, the per-request model override, the
 * Idempotency-Key, and the one inbound envelope the session stores. /v1/chat/completions and
 * /v1/responses both build their event from these, so they route and deduplicate alike.
 */

export type AppEnv = { Bindings: Env };
export type AppContext = Context<AppEnv>;

export function targetOf(
  c: AppContext,
  config: EdgeclawConfig,
  model: string,
  user: string | undefined,
  freshId?: string,
): SessionTarget {
  const agentId = resolveAgentId(model, c.req.header("x-openclaw-agent-id"), config);
  return resolveSessionTarget({
    agentId,
    user,
    sessionKeyHeader: c.req.header("x-openclaw-session-key"),
    config,
    newId: freshId ? () => freshId : undefined,
  });
}

/** The synthetic ingress channel: `openai`, or `webchat` for edgeclaw's own page. */
export function channelOf(c: AppContext): "openai" | "webchat" {
  const value = c.req.header("x-openclaw-message-channel")?.trim().toLowerCase();
  if (!value || value === "openai") return "openai";
  if (value === "webchat") return "webchat";
  throw invalidRequest(
    "x-openclaw-message-channel must be `openai` or `webchat`",
    "x-openclaw-message-channel",
  );
}

/** `x-openclaw-model`: a per-request `provider/model` override for the selected agent. */
export function modelOverrideOf(c: AppContext): string | undefined {
  const value = c.req.header("x-openclaw-model")?.trim();
  if (!value) return undefined;
  if (!/^[^/\s]+\/\S+$/.test(value) || value.length > 200) {
    throw invalidRequest(
      "x-openclaw-model must be `provider/model`",
      "x-openclaw-model",
      "invalid_model_override",
    );
  }
  return value;
}

/** `Idempotency-Key` makes a client's retry the same event; without it every request is new. */
export function requestIdOf(c: AppContext): { id: string; fromClient: boolean } {
  const key = c.req.header("idempotency-key")?.trim();
  if (!key) return { id: crypto.randomUUID(), fromClient: false };
  if (key.length > 200 || /[\s\u0000-\u001f\u007f]/.test(key)) {
    throw invalidRequest(
      "Idempotency-Key must be at most 200 characters without whitespace",
      "idempotency-key",
    );
  }
  return { id: `idem:${key}`, fromClient: true };
}

export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)]
    .map((byte) => byte.toString(16).padStart(2, "0"))
    .join("")
    .slice(0, 32);
}

export function envelopeFor(
  c: AppContext,
  requestId: string,
  user: string | undefined,
  text: string,
  attachments: InboundAttachment[],
  textParam = "messages",
): InboundEnvelope {
  const channel = channelOf(c);
  // The caller holds the gateway token: it is the operator, so it speaks as the owner.
  const sender = user ?? "operator";
  const parsed = inboundEnvelopeSchema.safeParse({
    dedupKey: dedupKeyOf(c, requestId),
    channel,
    chatType: "direct",
    peerId: sender,
    senderId: sender,
    messageId: requestId,
    text,
    ...(attachments.length ? { attachments } : {}),
    receivedAt: Date.now(),
    route: { channel, to: sender },
  });
  if (!parsed.success) {
    const tooLong = parsed.error.issues.some((issue) => issue.path[0] === "text");
    throw invalidRequest(
      tooLong ? "The message text is too long (max 200000 characters)" : "Invalid request",
      textParam,
    );
  }
  return parsed.data;
}

/** Dedup happens inside the session's own Durable Object, so the request id need not name it. */
export function dedupKeyOf(c: AppContext, requestId: string): string {
  return `${channelOf(c)}:${requestId}`;
}

/**
 * Calls the session with the event; a session that cannot be reached is a 503 the client may
 * retry with the same Idempotency-Key (the event is stored at most once either way).
 */
export async function callSession<T>(
  env: Env,
  routed: RoutedEvent,
  call: () => Promise<T>,
): Promise<T> {
  try {
    return await call();
  } catch (error) {
    createLogger(
      configFromEnv(env),
      env,
      { channel: "openai", sessionKey: routed.sessionKey },
      routed.envelope.text ? [routed.envelope.text] : [],
    ).error("openai api: session did not accept the event", { error });
    throw new OpenAIHttpError(
      503,
      "The session could not accept the request; retry with the same Idempotency-Key",
      "api_error",
      "session_unavailable",
      null,
      { "retry-after": "1" },
    );
  }
}
