import type { Delivered } from "./feishu-records.ts";

/** The message payloads the fake Feishu reads and answers: content checks, text, message data. */

/** The `data` Feishu answers a send or reply with. */
export function messageData(message: Delivered) {
  return {
    message_id: message.message_id,
    chat_id: message.chat_id,
    msg_type: message.msg_type,
    create_time: String(message.at),
    ...(message.thread ? { thread_id: `omt_${message.message_id}` } : {}),
  };
}

/** Feishu checks `content` is a JSON string matching `msg_type`; a post's `md`/`text` elements carry its text. */
export function validateContent(
  msgType: string | undefined,
  content: string | undefined,
): string | undefined {
  if (!msgType || !content) return "msg_type and content are required";
  let parsed: unknown;
  try {
    parsed = JSON.parse(content);
  } catch {
    return "content is not a JSON string";
  }
  if (Buffer.byteLength(content) > 30 * 1024) return "content too large";
  if (msgType === "text")
    return typeof (parsed as { text?: unknown }).text === "string"
      ? undefined
      : "text content needs text";
  if (msgType === "file" || msgType === "audio")
    return typeof (parsed as { file_key?: unknown }).file_key === "string"
      ? undefined
      : `${msgType} content needs file_key`;
  if (msgType === "image")
    return typeof (parsed as { image_key?: unknown }).image_key === "string"
      ? undefined
      : "image content needs image_key";
  if (msgType === "post") {
    const locales = Object.values(parsed as Record<string, unknown>);
    const ok =
      locales.length > 0 &&
      locales.every((l) => Array.isArray((l as { content?: unknown }).content));
    return ok ? undefined : "post content needs <locale>.content";
  }
  return undefined;
}

/** `{"type":"card","data":{"card_id"}}` names a card entity; a whole card JSON does not. */
export function cardReference(content: string): string | undefined {
  const parsed = parseJson(content) as { type?: unknown; data?: { card_id?: unknown } } | undefined;
  return parsed?.type === "card" ? String(parsed.data?.card_id ?? "") : undefined;
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The text a delivered message shows: a text's text, a card's markdown, a post's elements. */
export function postText(msgType: string, content: string): string {
  const parsed = JSON.parse(content) as Record<string, unknown>;
  if (msgType === "file" || msgType === "image" || msgType === "audio") return "";
  if (msgType === "text") return String(parsed.text);
  if (msgType === "interactive") {
    const elements =
      (parsed.body as { elements?: Array<{ tag?: string; content?: string }> } | undefined)
        ?.elements ?? [];
    return elements
      .filter((e) => e.tag === "markdown")
      .map((e) => e.content ?? "")
      .join("\n");
  }
  const body = Object.values(parsed)[0] as { content: Array<Array<{ text?: string }>> };
  return body.content.map((p) => p.map((e) => e.text ?? "").join("")).join("\n");
}

export function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}
