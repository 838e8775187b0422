import type { ServerResponse } from "node:http";
import { randomUUID } from "node:crypto";
import { json } from "../../../../scripts/simulate/fakes/kit.ts";
import type { MsTeamsFakeState } from "./msteams-state.ts";

/**
 * Teams' streaming rules as documented: personal chats only; the first update (no streamId) opens
 * a stream whose id is the answer; each later update names it with a higher streamSequence, and
 * `streaming` text must extend what was shown; the `final` message ends it once; anything into an
 * ended stream is refused 403 ContentStreamNotAllowed.
 */
export function streamActivity(
  state: MsTeamsFakeState,
  res: ServerResponse,
  conversation: string,
  body: { type?: string; text?: string },
  info: { streamId?: string; streamType?: string; streamSequence?: number },
) {
  const script = state.scripted(info.streamType === "final" ? "final" : "stream", conversation);
  if (script?.status)
    return json(res, script.status, {
      error: {
        code: script.status === 403 ? "ContentStreamNotAllowed" : "ServiceError",
        message: "scripted",
      },
    });
  if (!conversation.startsWith("a:"))
    return json(res, 403, {
      error: {
        code: "ContentStreamNotAllowed",
        message: "streaming is only supported in personal chats",
      },
    });
  const refuse = (status: number, code: string, message: string) =>
    json(res, status, { error: { code, message } });
  if (info.streamType === "final") {
    const stream = info.streamId ? state.streams.get(info.streamId) : undefined;
    if (!stream || stream.conversation !== conversation)
      return refuse(400, "BadRequest", "unknown stream");
    if (stream.ended)
      return refuse(
        403,
        "ContentStreamNotAllowed",
        "Content stream is not allowed on an already completed streamed message",
      );
    if (body.type !== "message")
      return refuse(400, "BadRequest", "a final stream activity is a message");
    stream.ended = true;
    state.activities.push({
      id: info.streamId!,
      conversation,
      type: "message",
      text: body.text,
      streamId: info.streamId,
      streamType: "final",
      at: Date.now(),
    });
    return script?.drop ? res.destroy() : json(res, 201, { id: info.streamId });
  }
  if (
    body.type !== "typing" ||
    (info.streamType !== "informative" && info.streamType !== "streaming")
  )
    return refuse(400, "BadRequest", "stream updates are typing state.activities");
  if (!Number.isInteger(info.streamSequence) || info.streamSequence! < 1)
    return refuse(400, "BadRequest", "streamSequence required");
  let id = info.streamId;
  if (!id) {
    if (info.streamSequence !== 1)
      return refuse(400, "BadRequest", "a new stream starts at streamSequence 1");
    if ([...state.streams.values()].some((s) => s.conversation === conversation && !s.ended))
      return refuse(403, "ContentStreamNotAllowed", "one stream per chat at a time");
    id = `1${Date.now()}${Math.floor(Math.random() * 1000)}`;
    state.streams.set(id, { conversation, sequence: 0, text: "", ended: false });
  }
  const stream = state.streams.get(id);
  if (!stream || stream.conversation !== conversation)
    return refuse(400, "BadRequest", "unknown stream");
  if (stream.ended)
    return refuse(
      403,
      "ContentStreamNotAllowed",
      "Content stream is not allowed on an already completed streamed message",
    );
  if (info.streamSequence! <= stream.sequence)
    return refuse(400, "BadRequest", "streamSequence out of order");
  if (info.streamType === "streaming") {
    if (!(body.text ?? "").startsWith(stream.text))
      return refuse(
        403,
        "ContentStreamNotAllowed",
        "streamed text must include what was streamed before",
      );
    stream.text = body.text ?? "";
  }
  stream.sequence = info.streamSequence!;
  state.activities.push({
    id: `t-${randomUUID()}`,
    conversation,
    type: "typing",
    text: body.text,
    streamId: id,
    streamType: info.streamType,
    streamSequence: info.streamSequence,
    at: Date.now(),
  });
  return script?.drop ? res.destroy() : json(res, 201, { id });
}
