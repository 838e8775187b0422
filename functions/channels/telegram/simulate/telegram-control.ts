import type { ServerResponse } from "node:http";
import { json } from "../../../../scripts/simulate/fakes/kit.ts";
import type { Script } from "./telegram-records.ts";
import type { TelegramFakeState } from "./telegram-state.ts";

/** The fake Telegram's `/_control/…` endpoints: what tests script, seed and read back. */
export function telegramControl(
  state: TelegramFakeState,
  url: URL,
  method: string,
  body: string,
  res: ServerResponse,
) {
  const path = url.pathname.slice("/_control/".length);
  if (path === "reset" && method === "POST") {
    state.calls = [];
    state.messages = [];
    state.scripts = [];
    state.lastIds.clear();
    state.files.clear();
    state.webhooks.clear();
    state.usernames.clear();
    for (const queue of state.polling.values()) queue.waiting?.(false);
    state.polling.clear();
    return json(res, 200, { ok: true });
  }
  if (path === "script" && method === "POST") {
    const script = JSON.parse(body) as Partial<Script> & { method: string };
    state.scripts.push({
      times: 1,
      ...script,
      ...(script.chatId !== undefined ? { chatId: String(script.chatId) } : {}),
    });
    return json(res, 200, { ok: true });
  }
  if (path === "file" && method === "POST") {
    const file = JSON.parse(body) as {
      fileId: string;
      content?: string;
      /** Binary content (a photo, a voice note) instead of `content`. */
      contentBase64?: string;
      filePath?: string;
      size?: number;
    };
    const content =
      file.contentBase64 !== undefined
        ? Buffer.from(file.contentBase64, "base64")
        : Buffer.from(file.content ?? "");
    state.files.set(file.fileId, {
      content,
      filePath: file.filePath ?? `documents/${file.fileId}.txt`,
      size: file.size ?? content.byteLength,
    });
    return json(res, 200, { ok: true });
  }
  if (path === "identity" && method === "POST") {
    const identity = JSON.parse(body) as { botId: string; username: string };
    state.usernames.set(String(identity.botId), identity.username);
    return json(res, 200, { ok: true });
  }
  if (path === "updates" && method === "POST") {
    const queued = JSON.parse(body) as { botId: string; updates: Array<{ update_id: number }> };
    const queue = state.pollQueue(String(queued.botId));
    queue.pending.push(
      ...queued.updates.filter((update) => update.update_id >= queue.confirmedOffset),
    );
    // A waiting long poll answers now, as Telegram's does when an update arrives.
    const waiting = queue.waiting;
    queue.waiting = undefined;
    waiting?.(false);
    return json(res, 200, { ok: true });
  }
  if (path === "updates") {
    const queue = state.pollQueue(url.searchParams.get("bot_id") ?? "");
    return json(res, 200, { pending: queue.pending, confirmedOffset: queue.confirmedOffset });
  }
  const chat = url.searchParams.get("chat_id");
  if (path === "calls") {
    const only = url.searchParams.get("method");
    return json(
      res,
      200,
      state.calls.filter(
        (c) => (!only || c.method === only) && (!chat || String(c.args.chat_id) === chat),
      ),
    );
  }
  if (path === "messages")
    return json(
      res,
      200,
      state.messages.filter((m) => !chat || m.chat_id === chat),
    );
  if (path === "webhook")
    return json(res, 200, state.webhooks.get(url.searchParams.get("bot_id") ?? "") ?? null);
  return json(res, 404, { error: "unknown control endpoint" });
}
