import { Hono, type Context } from "hono";
import { createLogger } from "../functions/logging/logger.ts";
import type { RoutedEvent } from "../durable-objects/session-api.ts";
import {
  inboundEnvelopeSchema,
  type InboundAttachment,
  type InboundEnvelope,
} from "../functions/core/envelope.ts";
import { configFromEnv } from "../functions/channels/gateway-config.ts";
import type { EdgeclawConfig } from "../functions/config/schema.ts";
import type { Env } from "./env.ts";
import { requireGatewayToken } from "./gateway-auth.ts";
import { completionResponse, streamingResponse, type CompletionMeta } from "./openai/completion.ts";
import { OpenAIHttpError, invalidRequest, notFound } from "./openai/errors.ts";
import { storeRequestImages } from "./openai/images.ts";
import { buildInboundText, rejectUnsupported } from "./openai/prompt.ts";
import { readJsonBody } from "./openai/read-json-body.ts";
import { chatCompletionRequestSchema, describeIssue } from "./openai/request-schema.ts";
import { readRunEvents } from "./openai/run-events.ts";
import { readHistory, sessionStub } from "./openai/session-client.ts";
import {
  agentIdFromModel,
  agentTargetIds,
  resolveAgentId,
  resolveSessionTarget,
  type SessionTarget,
} from "./openai/target.ts";

/**
 * The OpenAI-compatible HTTP API (OpenClaw's gateway/openai-http-api), mounted at /v1. Every
 * request is checked in this order: endpoint enabled (404) → gateway token (401/429) → body size
 * (413) → JSON and fields (400) → agent target (404). Only a request that passes all of them
 * reaches a SessionDO, so bad input never creates a session or an event.
 */

type AppEnv = { Bindings: Env };
type AppContext = Context<AppEnv>;

export const openaiApi = new Hono<AppEnv>();

openaiApi.onError((error, c) => {
  if (error instanceof OpenAIHttpError) return error.toResponse();
  createLogger(configFromEnv(c.env), c.env, { channel: "openai" }).error(
    "openai api: unexpected error",
    { error },
  );
  return new OpenAIHttpError(
    500,
    "Internal gateway error",
    "api_error",
    "internal_error",
  ).toResponse();
});

openaiApi.use("*", async (c, next) => {
  if (!configFromEnv(c.env).gateway.http.endpoints.chatCompletions.enabled) {
    throw notFound(
      "The OpenAI-compatible API is disabled (gateway.http.endpoints.chatCompletions.enabled)",
      "endpoint_disabled",
    );
  }
  await next();
});

openaiApi.use("*", requireGatewayToken);

openaiApi.get("/models", (c) => {
  const config = configFromEnv(c.env);
  return c.json({ object: "list", data: agentTargetIds(config).map(modelObject) });
});

openaiApi.get("/models/:id{.+}", (c) => {
  const config = configFromEnv(c.env);
  const id = decodeURIComponent(c.req.param("id"));
  agentIdFromModel(id, config);
  const listed = agentTargetIds(config).find((target) => target === id.toLowerCase());
  if (!listed) throw notFound(`The model \`${id}\` does not exist`, "model_not_found", "model");
  return c.json(modelObject(listed));
});

openaiApi.post("/chat/completions", async (c) => {
  const config = configFromEnv(c.env);
  const raw = await readJsonBody(
    c.req.raw,
    config.gateway.http.endpoints.chatCompletions.maxBodyBytes,
  );
  const parsed = chatCompletionRequestSchema.safeParse(raw);
  if (!parsed.success) {
    const { message, param } = describeIssue(parsed.error);
    throw invalidRequest(message, param);
  }
  const request = parsed.data;
  rejectUnsupported(request);
  const requestId = requestIdOf(c);
  // A retried stateless request must reach the same fresh session, so its id comes from the key.
  const freshId = requestId.fromClient ? await sha256Hex(requestId.id) : undefined;
  const target = targetOf(c, config, request.model, request.user, freshId);
  const text = buildInboundText(request, target.persistent);
  const attachments = await storeRequestImages({
    request,
    env: c.env,
    config,
    agentId: target.agentId,
    sessionKey: target.sessionKey,
    dedupKey: dedupKeyOf(c, requestId.id),
  });
  const routed: RoutedEvent = {
    envelope: envelopeFor(c, requestId.id, request.user, text, attachments),
    agentId: target.agentId,
    sessionKey: target.sessionKey,
  };
  const modelOverride = modelOverrideOf(c);
  if (modelOverride) routed.overrides = { model: modelOverride };

  const events = readRunEvents(await acceptInSession(c.env, routed));
  const meta: CompletionMeta = {
    id: `chatcmpl-${crypto.randomUUID().replaceAll("-", "")}`,
    created: Math.floor(Date.now() / 1000),
    model: request.model,
    includeUsage: request.stream_options?.include_usage === true,
    surfaceEvents: (c.req.header("x-edgeclaw-events") ?? "")
      .split(",")
      .map((s) => s.trim())
      .includes("tools"),
  };
  const response = request.stream
    ? streamingResponse(events, meta)
    : await completionResponse(events, meta);
  response.headers.set("x-openclaw-session-key", target.sessionKey);
  return response;
});

/**
 * edgeclaw extension for the web chat: the visible transcript of the session a `user` (or an
 * `x-openclaw-session-key`) maps to, so a reloaded page shows the conversation so far.
 */
openaiApi.get("/edgeclaw/history", async (c) => {
  const config = configFromEnv(c.env);
  const user = c.req.query("user")?.trim() || undefined;
  if (!user && !c.req.header("x-openclaw-session-key")?.trim()) {
    throw invalidRequest("`user` is required (or send x-openclaw-session-key)", "user");
  }
  if (user && user.length > 256)
    throw invalidRequest("`user` must be at most 256 characters", "user");
  const target = targetOf(c, config, c.req.query("model") ?? "openclaw", user);
  return c.json({
    object: "list",
    session_key: target.sessionKey,
    data: await readHistory(c.env, target.sessionKey),
  });
});

// Registered last: anything else under /v1 gets an OpenAI-shaped 404 (after the auth check).
openaiApi.all("*", (c) =>
  notFound(
    `No route for ${c.req.method} ${new URL(c.req.url).pathname}`,
    "unknown_route",
  ).toResponse(),
);

function modelObject(id: string) {
  return { id, object: "model", created: 0, owned_by: "openclaw" };
}

function targetOf(
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
function channelOf(c: AppContext): "openai" | "webchat" {
  const value = c.req.header("x-openclaw-message-channel")?.trim().toLowerCase();
  if (!value || value === "openai") return "openai";
  if (value === "webchat") return "webchat";
  throw invalidRequest(
    "x-openclaw-message-channel must be `openai` or `webchat`",
    "x-openclaw-message-channel",
  );
}

/** `x-openclaw-model`: a per-request `provider/model` override for the selected agent. */
function modelOverrideOf(c: AppContext): string | undefined {
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
function requestIdOf(c: AppContext): { id: string; fromClient: boolean } {
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

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)]
    .map((byte) => byte.toString(16).padStart(2, "0"))
    .join("")
    .slice(0, 32);
}

function envelopeFor(
  c: AppContext,
  requestId: string,
  user: string | undefined,
  text: string,
  attachments: InboundAttachment[],
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
      "messages",
    );
  }
  return parsed.data;
}

/** Dedup happens inside the session's own Durable Object, so the request id need not name it. */
function dedupKeyOf(c: AppContext, requestId: string): string {
  return `${channelOf(c)}:${requestId}`;
}

async function acceptInSession(env: Env, routed: RoutedEvent): Promise<ReadableStream<Uint8Array>> {
  try {
    return await sessionStub(env, routed.sessionKey).chat(routed);
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
      {
        "retry-after": "1",
      },
    );
  }
}
