import type { IncomingMessage, ServerResponse } from "node:http";
import { json } from "../../../../scripts/simulate/fakes/kit.ts";
import { checkContent, publicMessage } from "./discord-payloads.ts";
import { type FakeMessage, nextSnowflake } from "./discord-records.ts";
import type { DiscordFakeState } from "./discord-state.ts";

/**
 * Interaction webhooks (`/webhooks/{app}/{token}[/messages/@original]`): follow-ups and the
 * original response, with no auth header; `DELETE …/@original` removes the deferral's
 * "thinking…" (404 once it is gone), and a token ending in "expired" is an unknown webhook.
 */
export function interactionWebhook(
  state: DiscordFakeState,
  appId: string,
  token: string,
  which: string | undefined,
  method: string,
  body: Record<string, unknown>,
  res: ServerResponse,
  url: URL,
  drop: boolean,
  req: IncomingMessage,
) {
  if (token.endsWith("expired")) return json(res, 404, { message: "Unknown Webhook", code: 10015 });
  const key = `interaction:${appId}:${token.slice(-8)}`;
  if (method === "DELETE" && which === "@original") {
    // The deferral's "thinking…" message exists on Discord even though nothing here posted it.
    const original = state.messages.find((m) => m.interaction === key && m.id.startsWith("orig"));
    if (original?.deleted) return json(res, 404, { message: "Unknown Message", code: 10008 });
    if (original) original.deleted = true;
    else
      state.messages.push({
        id: `orig${nextSnowflake()}`,
        channel_id: "interaction",
        author: { id: appId, username: "edgeclaw", bot: true },
        content: "",
        interaction: key,
        edits: 0,
        deleted: true,
        at: Date.now(),
      });
    return drop ? void req.socket.destroy() : void res.writeHead(204).end();
  }
  const invalid = checkContent(body);
  if (invalid) return json(res, 400, invalid);
  let message: FakeMessage | undefined;
  if (method === "PATCH" && which === "@original") {
    message = state.messages.find((m) => m.interaction === key && m.id.startsWith("orig"));
    if (!message) {
      message = {
        id: `orig${nextSnowflake()}`,
        channel_id: "interaction",
        author: { id: appId, username: "edgeclaw", bot: true },
        content: "",
        interaction: key,
        edits: 0,
        at: Date.now(),
      };
      state.messages.push(message);
    }
    message.content = String(body.content);
    message.edits += 1;
  } else if (method === "POST" && !which) {
    message = {
      id: nextSnowflake(),
      channel_id: "interaction",
      author: { id: appId, username: "edgeclaw", bot: true },
      content: String(body.content),
      interaction: key,
      ...(typeof body.flags === "number" ? { flags: body.flags } : {}),
      edits: 0,
      at: Date.now(),
    };
    state.messages.push(message);
  } else return json(res, 405, { message: "405: Method Not Allowed", code: 0 });
  if (drop) return void req.socket.destroy();
  return url.searchParams.get("wait") === "false"
    ? void res.writeHead(204).end()
    : json(res, 200, publicMessage(message));
}
