import { Hono } from "hono";
import { createLogger } from "../functions/logging/logger.ts";
import type { RoutedEvent } from "../durable-objects/session-api.ts";
import { configFromEnv } from "../functions/channels/gateway-config.ts";
import { requireGatewayToken } from "./gateway-auth.ts";
import { completionResponse, streamingResponse, type CompletionMeta } from "./openai/completion.ts";
import { OpenAIHttpError, invalidRequest, notFound } from "./openai/errors.ts";
import { storeRequestImages } from "./openai/images.ts";
import { buildInboundText, rejectUnsupported } from "./openai/prompt.ts";
import { readJsonBody } from "./openai/read-json-body.ts";
import { chatCompletionRequestSchema, describeIssue } from "./openai/request-schema.ts";
import { readRunEvents } from "./openai/run-events.ts";
import { readHistory, sessionStub } from "./openai/session-client.ts";
import { agentIdFromModel, agentTargetIds } from "./openai/target.ts";
import { createResponse } from "./openai/responses.ts";
import {
  callSession,
  dedupKeyOf,
  envelopeFor,
  modelOverrideOf,
  requestIdOf,
  sha256Hex,
  targetOf,
  type AppEnv,
} from "./openai/request-context.ts";

/**
 * The OpenAI-compatible HTTP API (OpenClaw's gateway/openai-http-api), mounted at /v1. Every
 * request is checked in this order: endpoint enabled (404) → gateway token (401/429) → body size
 * (413) → JSON and fields (400) → agent target (404). Only a request that passes all of them
 * reaches a SessionDO, so bad input never creates a session or an event.
 */

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
  const endpoints = configFromEnv(c.env).gateway.http.endpoints;
  const path = new URL(c.req.url).pathname;
  // Each endpoint has its own switch; the model list serves whichever of them is on (OpenClaw).
  const [enabled, key] = /^\/v1\/responses(\/|$)/.test(path)
    ? [endpoints.responses.enabled, "gateway.http.endpoints.responses.enabled"]
    : /^\/v1\/models(\/|$)/.test(path)
      ? [
          endpoints.chatCompletions.enabled || endpoints.responses.enabled,
          "gateway.http.endpoints.chatCompletions.enabled or .responses.enabled",
        ]
      : [endpoints.chatCompletions.enabled, "gateway.http.endpoints.chatCompletions.enabled"];
  if (!enabled) throw notFound(`This endpoint is disabled (${key})`, "endpoint_disabled");
  await next();
});

openaiApi.use("*", requireGatewayToken);

// OpenClaw's OpenResponses API (workers/openai/responses.ts).
openaiApi.post("/responses", createResponse);

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

  const events = readRunEvents(
    await callSession(c.env, routed, () => sessionStub(c.env, routed.sessionKey).chat(routed)),
  );
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
