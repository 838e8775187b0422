import type { IncomingMessage, ServerResponse } from "node:http";
import { randomUUID } from "node:crypto";
import { json } from "../../../../scripts/simulate/fakes/kit.ts";
import type { MsTeamsFakeState } from "./msteams-state.ts";
import { streamActivity } from "./msteams-streaming.ts";

/** The Bot Connector's activities path; group 1 is the conversation, group 2 the activity. */
export const ACTIVITIES_PATH = /^\/v3\/conversations\/([^/]+)\/activities(?:\/([^/]+))?$/;

/**
 * POST /v3/conversations/{id}/activities[/{replyToId}] (a message, a typing activity, or a
 * stream update with a `streaminfo` entity), PUT …/{activityId} (an edit, counted in `updates`)
 * and DELETE …/{activityId}, behind a token the token endpoint issued.
 */
export function activitiesRoute(
  state: MsTeamsFakeState,
  req: IncomingMessage,
  res: ServerResponse,
  raw: string,
  send: RegExpExecArray,
) {
  const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1] ?? "";
  if (!state.tokens.has(token))
    return json(res, 401, { message: "Authorization has been denied for this request." });
  const conversation = decodeURIComponent(send[1]!);
  const base = conversation.split(";messageid=")[0]!;
  const target = send[2] ? decodeURIComponent(send[2]) : undefined;
  if (req.method === "PUT" || req.method === "DELETE") {
    const script = state.scripted(req.method === "PUT" ? "update" : "delete", conversation);
    if (script?.status)
      return json(
        res,
        script.status,
        { error: { code: "ServiceError", message: "scripted" } },
        script.retryAfter !== undefined ? { "retry-after": String(script.retryAfter) } : {},
      );
    const existing = state.activities.find(
      (a) =>
        a.id === target && a.conversation.split(";messageid=")[0] === base && a.type === "message",
    );
    if (!existing || existing.deleted)
      return json(res, 404, { error: { code: "NotFound", message: "activity not found" } });
    if (req.method === "DELETE") {
      existing.deleted = true;
      return json(res, 200, {});
    }
    const body = JSON.parse(raw) as { text?: string };
    existing.text = body.text;
    existing.updates = (existing.updates ?? 0) + 1;
    const reply = () => json(res, 200, { id: existing.id });
    return script?.drop ? res.destroy() : reply();
  }
  const body = JSON.parse(raw) as {
    type?: string;
    text?: string;
    id?: string;
    entities?: Array<{
      type?: string;
      streamId?: string;
      streamType?: string;
      streamSequence?: number;
    }>;
  };
  const info = body.entities?.find((e) => e.type === "streaminfo");
  if (info) return streamActivity(state, res, conversation, body, info);
  if (body.type === "typing") {
    state.activities.push({
      id: `t-${randomUUID()}`,
      conversation,
      type: "typing",
      at: Date.now(),
    });
    return json(res, 200, {});
  }
  const script = state.scripted("send", conversation);
  if (script?.status)
    return json(
      res,
      script.status,
      { error: { code: "ServiceError", message: "scripted" } },
      script.retryAfter !== undefined ? { "retry-after": String(script.retryAfter) } : {},
    );
  if ((body.text ?? "").length > 28_000)
    return json(res, 413, { error: { code: "MessageSizeTooBig", message: "too big" } });
  const id = `1${Date.now()}${Math.floor(Math.random() * 1000)}`;
  state.activities.push({
    id,
    conversation,
    replyToId: target,
    type: body.type ?? "message",
    text: body.text,
    at: Date.now(),
  });
  return script?.drop ? res.destroy() : json(res, 201, { id });
}
