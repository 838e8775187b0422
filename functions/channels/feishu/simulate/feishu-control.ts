import type { ServerResponse } from "node:http";
import { controlBody, json } from "../../../../scripts/simulate/fakes/kit.ts";
import type { Script } from "./feishu-records.ts";
import type { FeishuFakeState } from "./feishu-state.ts";

/** The fake Feishu's `/_control/…` endpoints: what tests set up, script and read back. */
export function feishuControl(state: FeishuFakeState, url: URL, raw: string, res: ServerResponse) {
  const body = controlBody(raw);
  switch (url.pathname) {
    case "/_control/app":
      state.apps.set(String(body.app_id), String(body.app_secret));
      return json(res, 200, { ok: true });
    case "/_control/token-lifetime":
      state.lifetimeSeconds = Number(body.seconds ?? 7200);
      return json(res, 200, { ok: true });
    case "/_control/revoke-tokens":
      state.issued.clear();
      return json(res, 200, { ok: true });
    case "/_control/message":
      state.userMessages.set(String(body.message_id), String(body.chat_id));
      return json(res, 200, { ok: true });
    case "/_control/resource":
      state.resources.set(
        `${String(body.message_id)}/${String(body.key)}`,
        Buffer.from(String(body.content ?? ""), "utf8"),
      );
      return json(res, 200, { ok: true });
    case "/_control/script":
      state.scripts.push({ ...(body as unknown as Script), times: Number(body.times ?? 1) });
      return json(res, 200, { ok: true });
    case "/_control/calls": {
      const api = url.searchParams.get("api");
      const chat = url.searchParams.get("chat");
      return json(
        res,
        200,
        state.calls.filter((c) => (!api || c.api === api) && (!chat || c.chat === chat)),
      );
    }
    case "/_control/messages": {
      const chat = url.searchParams.get("chat");
      const shown = state.delivered
        .filter((m) => !chat || m.chat_id === chat)
        .map((m) =>
          m.card_id
            ? {
                ...m,
                text: state.cards.get(m.card_id)!.text,
                streaming: state.cards.get(m.card_id)!.streaming,
              }
            : m,
        );
      return json(res, 200, shown);
    }
    case "/_control/reset":
      state.calls = [];
      state.delivered = [];
      state.scripts = [];
      return json(res, 200, { ok: true });
  }
  return json(res, 404, { message: "unknown control endpoint" });
}
