import type { IncomingMessage, ServerResponse } from "node:http";
import { json } from "../../../../scripts/simulate/fakes/kit.ts";
import { checkContent, publicMessage } from "./discord-payloads.ts";
import {
  type FakeAttachment,
  type FakeMessage,
  nextSnowflake,
  type Script,
} from "./discord-records.ts";
import type { DiscordFakeState } from "./discord-state.ts";

/**
 * `/channels/{id}/messages[/{id}]` and `/channels/{id}/typing` for an authenticated bot: history
 * newest first without `nonce`, create (content checks, `enforce_nonce`, the channel's message
 * bucket), edit and delete of the bot's own messages. `script` is the failure scripted for this
 * call, if any: its `dropConnection` applies the call and then destroys the socket.
 */
export function channelMessages(
  state: DiscordFakeState,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  method: string,
  body: Record<string, unknown>,
  attachments: FakeAttachment[] | undefined,
  channel: RegExpExecArray,
  botId: string,
  script: Script | undefined,
) {
  const channelId = channel[1]!;
  const answer = (status: number, payload: unknown) =>
    script?.dropConnection ? void req.socket.destroy() : json(res, status, payload);

  if (channel[2] === "typing")
    return script?.dropConnection ? void req.socket.destroy() : void res.writeHead(204).end();
  const messageId = channel[3];
  if (method === "GET" && !messageId) {
    const after = BigInt(url.searchParams.get("after") ?? "0");
    const limit = Number(url.searchParams.get("limit") ?? 50);
    const found = state.messages
      .filter((m) => m.channel_id === channelId && !m.deleted && BigInt(m.id) > after)
      .sort((a, b) => (BigInt(b.id) > BigInt(a.id) ? 1 : -1))
      .slice(0, limit)
      .map(({ nonce: _nonce, edits: _edits, at: _at, deleted: _deleted, ...visible }) => visible);
    return json(res, 200, found);
  }
  if (method === "POST" && !messageId) {
    if (script?.dropBeforeCreate) return void req.socket.destroy();
    if (refusedByBucket(state, res, channelId)) return;
    const invalid = attachments?.length ? undefined : checkContent(body);
    if (invalid) return json(res, 400, invalid);
    const nonce = body.nonce !== undefined ? String(body.nonce) : undefined;
    if (nonce && nonce.length > 25)
      return json(res, 400, {
        message: "Invalid Form Body",
        code: 50035,
        errors: { nonce: "too long" },
      });
    if (nonce && body.enforce_nonce === true) {
      const existing = state.messages.find(
        (m) => m.channel_id === channelId && m.author.id === botId && m.nonce === nonce,
      );
      if (existing) return answer(200, publicMessage(existing));
    }
    const reference = body.message_reference as { message_id?: string } | undefined;
    const message: FakeMessage = {
      id: nextSnowflake(),
      channel_id: channelId,
      author: { id: botId, username: "edgeclaw", bot: true },
      content: String(body.content ?? ""),
      ...(nonce ? { nonce } : {}),
      ...(typeof body.flags === "number" ? { flags: body.flags } : {}),
      ...(reference?.message_id ? { message_reference: { message_id: reference.message_id } } : {}),
      ...(attachments?.length ? { attachments } : {}),
      edits: 0,
      at: Date.now(),
    };
    state.messages.push(message);
    return answer(200, publicMessage(message));
  }
  const target = state.messages.find(
    (m) => m.id === messageId && m.channel_id === channelId && !m.deleted,
  );
  if (!target) return json(res, 404, { message: "Unknown Message", code: 10008 });
  if (target.author.id !== botId)
    return json(res, 403, {
      message: "Cannot edit a message authored by another user",
      code: 50005,
    });
  if (method === "PATCH") {
    const invalid = checkContent(body);
    if (invalid) return json(res, 400, invalid);
    target.content = String(body.content);
    target.edits += 1;
    return answer(200, publicMessage(target));
  }
  if (method === "DELETE") {
    target.deleted = true;
    return script?.dropConnection ? void req.socket.destroy() : void res.writeHead(204).end();
  }
  return json(res, 405, { message: "405: Method Not Allowed", code: 0 });
}

/**
 * Discord's per-channel message bucket: headers on every answer, a 429 once it is empty (then
 * true: the answer is sent).
 */
function refusedByBucket(state: DiscordFakeState, res: ServerResponse, channelId: string): boolean {
  const limit = state.limits.get(channelId);
  if (!limit) return false;
  const now = Date.now();
  if (now >= limit.resetAt)
    Object.assign(limit, { remaining: limit.limit, resetAt: now + limit.resetAfter * 1000 });
  const resetAfter = ((limit.resetAt - now) / 1000).toFixed(3);
  res.setHeader("x-ratelimit-bucket", "fakemessagebucket");
  res.setHeader("x-ratelimit-limit", String(limit.limit));
  res.setHeader("x-ratelimit-reset-after", resetAfter);
  if (limit.remaining <= 0) {
    limit.refused += 1;
    res.setHeader("x-ratelimit-remaining", "0");
    res.setHeader("x-ratelimit-scope", "user");
    res.setHeader("retry-after", String(Math.ceil(Number(resetAfter))));
    json(res, 429, {
      message: "You are being rate limited.",
      retry_after: Number(resetAfter),
      global: false,
    });
    return true;
  }
  limit.remaining -= 1;
  res.setHeader("x-ratelimit-remaining", String(limit.remaining));
  return false;
}
