import type { IncomingMessage, ServerResponse } from "node:http";
import { json } from "../../../../scripts/simulate/fakes/kit.ts";
import { parseJson } from "./feishu-content.ts";
import type { Call, Card, Delivered, Script, Upload } from "./feishu-records.ts";

/**
 * Everything the fake Feishu holds between requests: the apps and tokens it knows, what the bot
 * sent, the recorded calls and the failures scripted for the next ones. The route handlers share
 * one instance; `/_control/reset` clears the calls, messages and scripts.
 */
export class FeishuFakeState {
  readonly apps: Map<string, string>;
  /** token → expiresAt */
  readonly issued = new Map<string, number>();
  lifetimeSeconds = 7200;
  calls: Call[] = [];
  delivered: Delivered[] = [];
  scripts: Script[] = [];
  /** message_id → chat_id of the user messages a test placed (reply and reaction targets). */
  readonly userMessages = new Map<string, string>();
  readonly byUuid = new Map<string, { message: Delivered; at: number }>();
  readonly resources = new Map<string, Buffer>();
  readonly cards = new Map<string, Card>();
  /** Files and images uploaded (im/v1/files, im/v1/images) by key; a message names one by its key. */
  readonly uploads = new Map<string, Upload>();
  nextId = 1;

  constructor(apps: Record<string, string>) {
    this.apps = new Map(Object.entries(apps));
  }

  /** The upload a file/image/audio message's content names by key. */
  fileOf(msgType: string, content: string): Upload | undefined {
    if (!["file", "image", "audio"].includes(msgType)) return undefined;
    const parsed = parseJson(content) as { file_key?: unknown; image_key?: unknown } | undefined;
    return this.uploads.get(String(parsed?.file_key ?? parsed?.image_key ?? ""));
  }

  authorized(req: IncomingMessage): boolean {
    const auth = String(req.headers.authorization ?? "");
    const expiresAt = this.issued.get(auth.startsWith("Bearer ") ? auth.slice(7) : "");
    return expiresAt !== undefined && expiresAt >= Date.now();
  }

  record(api: string, chat: string | undefined, body: unknown, token: string): Call {
    const call: Call = { api, chat, body, token, status: 0, code: -1, at: Date.now() };
    this.calls.push(call);
    return call;
  }

  /** The first script for this API and chat with times left: consumed and returned. */
  takeScript(api: string, chat: string | undefined): Script | undefined {
    const script = this.scripts.find(
      (s) => s.api === api && (!s.chat || s.chat === chat) && s.times > 0,
    );
    if (script) script.times -= 1;
    return script;
  }
}

/** Feishu's JSON answer `{code, msg, data}`, with the status and code noted on the recorded call. */
export function answer(
  res: ServerResponse,
  call: Call,
  status: number,
  code: number,
  data: unknown,
  msg = code === 0 ? "success" : "error",
  headers: Record<string, string> = {},
) {
  call.status = status;
  call.code = code;
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  return json(res, status, { code, msg, data });
}

/** The answer to a call without a valid tenant token. */
export function invalidToken(res: ServerResponse, call: Call) {
  return answer(res, call, 400, 99991663, {}, "Invalid access token for authorization.");
}
