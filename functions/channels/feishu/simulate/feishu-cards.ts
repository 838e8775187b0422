import type { IncomingMessage, ServerResponse } from "node:http";
import { parseJson, str } from "./feishu-content.ts";
import type { Call } from "./feishu-records.ts";
import { answer, type FeishuFakeState, invalidToken } from "./feishu-state.ts";

/** The CardKit path: /open-apis/cardkit/v1/cards[/{card_id}[/settings|/elements/{id}/content]]. */
export const CARD_PATH =
  /^\/open-apis\/cardkit\/v1\/cards(?:\/([^/]+)(?:\/(settings|elements\/([^/]+)\/content))?)?$/;

/** CardKit: create a card entity, stream its markdown element, change its settings. */
export function cardApi(
  state: FeishuFakeState,
  req: IncomingMessage,
  res: ServerResponse,
  method: string,
  body: Record<string, unknown>,
  path: RegExpExecArray,
) {
  const [, rawId, sub, elementId] = path;
  const card = rawId ? state.cards.get(decodeURIComponent(rawId)) : undefined;
  const api = !rawId ? "card.create" : sub === "settings" ? "card.settings" : "card.content";
  const call = state.record(api, card?.chat, body, "");
  if (!state.authorized(req)) return invalidToken(res, call);
  const script = state.takeScript(api, card?.chat);
  if (script)
    return answer(res, call, script.status ?? 429, script.code ?? 99991400, {}, "scripted failure");
  if (!rawId) return createCard(state, res, call, method, body);
  if (!card) return answer(res, call, 400, 300301, {}, "card not found");
  const sequence = body.sequence;
  const uuid = str(body.uuid);
  if (typeof sequence !== "number" || !Number.isInteger(sequence) || sequence < 1)
    return answer(res, call, 400, 99992402, {}, "field validation failed: sequence");
  if (uuid && card.uuids.has(uuid)) return answer(res, call, 200, 0, {});
  if (sequence <= card.sequence)
    return answer(res, call, 400, 300317, {}, "sequence number compare failed");
  if (sub === "settings") {
    if (method !== "PATCH") return answer(res, call, 404, 404, {}, "404 page not found");
    const settings = parseJson(str(body.settings) ?? "") as
      | { config?: { streaming_mode?: unknown } }
      | undefined;
    if (!settings) return answer(res, call, 400, 99992402, {}, "field validation failed: settings");
    if (typeof settings.config?.streaming_mode === "boolean")
      card.streaming = settings.config.streaming_mode;
  } else {
    if (method !== "PUT" || typeof body.content !== "string")
      return answer(res, call, 400, 99992402, {}, "field validation failed: content");
    if (decodeURIComponent(elementId!) !== card.elementId)
      return answer(res, call, 400, 300302, {}, "element not found");
    if (!card.streaming) return answer(res, call, 400, 300309, {}, "streaming mode is closed");
    card.text = body.content;
  }
  card.sequence = sequence;
  if (uuid) card.uuids.add(uuid);
  return answer(res, call, 200, 0, {});
}

/** POST /cards {type: "card_json", data}: a JSON 2.0 card with a markdown element to stream. */
function createCard(
  state: FeishuFakeState,
  res: ServerResponse,
  call: Call,
  method: string,
  body: Record<string, unknown>,
) {
  if (method !== "POST" || body.type !== "card_json" || typeof body.data !== "string")
    return answer(res, call, 400, 99992402, {}, "field validation failed");
  const json = parseJson(body.data) as
    | {
        schema?: string;
        config?: Record<string, unknown>;
        body?: { elements?: Array<Record<string, unknown>> };
      }
    | undefined;
  const element = json?.body?.elements?.find(
    (e) => e.tag === "markdown" && typeof e.element_id === "string",
  );
  if (json?.schema !== "2.0" || !element)
    return answer(res, call, 400, 99992402, {}, "card json 2.0 with a markdown element expected");
  if (json.config?.streaming_mode === true && json.config.update_multi === false)
    return answer(res, call, 400, 99992402, {}, "streaming cards must be shared (update_multi)");
  const id = `7${String(state.nextId++).padStart(18, "0")}`;
  state.cards.set(id, {
    id,
    elementId: String(element.element_id),
    text: String(element.content ?? ""),
    streaming: json.config?.streaming_mode === true,
    sequence: 0,
    uuids: new Set(),
  });
  return answer(res, call, 200, 0, { card_id: id });
}
