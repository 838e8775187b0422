import type {
  ResponsesAnswer,
  ResponsesTurn,
  RoutedEvent,
} from "../../durable-objects/session-api.ts";
import { configFromEnv } from "../../functions/channels/gateway-config.ts";
import { OpenAIHttpError, invalidRequest, notFound } from "./errors.ts";
import { storeImageUrls } from "./images.ts";
import { readJsonBody } from "./read-json-body.ts";
import {
  callSession,
  dedupKeyOf,
  envelopeFor,
  modelOverrideOf,
  requestIdOf,
  sha256Hex,
  targetOf,
  type AppContext,
} from "./request-context.ts";
import { newResponseId, sessionKeyOfResponseId } from "./responses-id.ts";
import { clientToolSpecs, readResponsesInput } from "./responses-input.ts";
import { responseJson, type ResponseMeta } from "./responses-output.ts";
import { describeResponsesIssue, responsesRequestSchema } from "./responses-schema.ts";
import { responseStream } from "./responses-stream.ts";
import { readRunEvents } from "./run-events.ts";
import type { SessionTarget } from "./target.ts";

/**
 * POST /v1/responses (OpenClaw's OpenResponses API) through the same path as chat completions:
 * enabled (404) → gateway token (401/429) → body size (413) → JSON and fields (400) → agent and
 * session (404/400) → images stored → the session's respond(), which checks previous_response_id
 * and stores the event with the response's record before anything is answered (durable before
 * ack). Then the Response object, or its stream of events.
 *
 * Sessions: a fresh one per request unless `user` or x-openclaw-session-key names one (as for
 * chat completions); previous_response_id continues the session its response was given in, for
 * the same agent, user and session header only.
 */
export async function createResponse(c: AppContext): Promise<Response> {
  const config = configFromEnv(c.env);
  const endpoint = config.gateway.http.endpoints.responses;
  const raw = await readJsonBody(c.req.raw, endpoint.maxBodyBytes);
  const parsed = responsesRequestSchema.safeParse(raw);
  if (!parsed.success) {
    const { message, param, code } = describeResponsesIssue(parsed.error);
    throw invalidRequest(message, param, code);
  }
  const request = parsed.data;
  const requestId = requestIdOf(c);
  const previousId = request.previous_response_id ?? undefined;
  const target = await targetFor(c, request.model, request.user, previousId, requestId);
  const input = readResponsesInput(request, !target.persistent && !previousId);
  const dedupKey = dedupKeyOf(c, requestId.id);
  const attachments = await storeImageUrls({
    images: input.images,
    totalParam: "input",
    limits: endpoint.images,
    limitsKey: "gateway.http.endpoints.responses.images",
    partName: "input_image",
    env: c.env,
    config,
    agentId: target.agentId,
    sessionKey: target.sessionKey,
    dedupKey,
  });
  const routed: RoutedEvent = {
    envelope: envelopeFor(c, requestId.id, request.user, input.text, attachments, "input"),
    agentId: target.agentId,
    sessionKey: target.sessionKey,
  };
  const modelOverride = modelOverrideOf(c);
  if (modelOverride) routed.overrides = { model: modelOverride };
  if (previousId) routed.continuesResponse = true;
  const clientTools = clientToolSpecs(request);
  if (clientTools) routed.clientTools = clientTools;

  const turn: ResponsesTurn = {
    event: routed,
    responseId: newResponseId(target.sessionKey),
    scope: scopeOf(c, target.agentId, request.user),
    ...(previousId ? { previousResponseId: previousId } : {}),
    ...(input.toolOutputs.length ? { toolOutputs: input.toolOutputs } : {}),
  };
  const session = c.env.SESSIONS.get(c.env.SESSIONS.idFromName(target.sessionKey));
  const answer = await callSession(
    c.env,
    routed,
    async (): Promise<ResponsesAnswer> => (await session.respond(turn)) as ResponsesAnswer,
  );
  if (!answer.ok)
    throw new OpenAIHttpError(
      answer.status,
      answer.message,
      "invalid_request_error",
      answer.code,
      answer.param,
    );
  const meta: ResponseMeta = {
    id: answer.id,
    createdAt: answer.createdAt,
    previousResponseId: answer.previousResponseId,
    request,
  };
  const events = readRunEvents(answer.events);
  const response = request.stream ? responseStream(events, meta) : await responseJson(events, meta);
  response.headers.set("x-openclaw-session-key", target.sessionKey);
  return response;
}

/**
 * The session of this turn: the previous response's, when one is continued (its id names it; a
 * `user` or session header naming another session is a mismatch, answered as not found), else
 * the one `user` / x-openclaw-session-key / a fresh id gives, as on chat completions.
 */
async function targetFor(
  c: AppContext,
  model: string,
  user: string | undefined,
  previousId: string | undefined,
  requestId: { id: string; fromClient: boolean },
): Promise<SessionTarget> {
  const config = configFromEnv(c.env);
  // A retried stateless request must reach the same fresh session, so its id comes from the key.
  const freshId = requestId.fromClient ? await sha256Hex(`responses:${requestId.id}`) : undefined;
  const own = targetOf(c, config, model, user, freshId);
  if (!previousId) return own;
  const sessionKey = sessionKeyOfResponseId(previousId);
  if (
    sessionKey.startsWith(`agent:${own.agentId}:`) &&
    (!own.persistent || own.sessionKey === sessionKey)
  )
    return { agentId: own.agentId, sessionKey, persistent: true };
  throw notFound(
    `Previous response with id '${previousId}' not found.`,
    "previous_response_not_found",
    "previous_response_id",
  );
}

/** Who may continue a response: the same agent, `user` and session header as gave it. */
function scopeOf(c: AppContext, agentId: string, user: string | undefined): string {
  const header = c.req.header("x-openclaw-session-key")?.trim().toLowerCase() ?? "";
  return JSON.stringify([agentId, user ?? "", header]);
}
