import type { IncomingMessage, ServerResponse } from "node:http";
import { randomBytes } from "node:crypto";
import { controlBody, fakeServer, json } from "../../../../scripts/simulate/fakes/kit.ts";
import { listenOnLoopback } from "../../../../scripts/simulate/fakes/listen.ts";

/**
 * A fake of the Graph API's WhatsApp Cloud endpoints on loopback, speaking Meta's wire format:
 *   POST /<version>/<phone_number_id>/messages
 *     { messaging_product: "whatsapp", recipient_type?, to, type: "text", text: { body }, context? }
 *       → 200 { messaging_product, contacts: [{ input, wa_id }], messages: [{ id: "wamid.…" }] }
 *       a body over 4096 characters, a missing `to` or a wrong messaging_product → 400 code 100
 *     { messaging_product, status: "read", message_id, typing_indicator? }  → 200 { success: true }
 *   GET  /<version>/<media_id>   → { messaging_product, url, mime_type, sha256, file_size, id },
 *        unknown id → 400 code 100 subcode 33 ("Unsupported get request")
 *   GET  /_lookaside/<media_id>  the bytes (Meta's lookaside.fbsbx.com; the token is required there too)
 * Errors are Graph errors: `{ error: { message, type, code, error_subcode?, error_data?, fbtrace_id } }`.
 * Auth: `Authorization: Bearer <token>`; none, or one starting with "revoked", → 401 code 190.
 *
 * Control endpoints (tests inside workerd call these by plain fetch):
 *   POST /_control/script { api: "send"|"read"|"media", to?, times?, status?, code?, dropConnection? }
 *        the next `times` (default 1) matching calls fail with `status` (default 500) and Graph
 *        error `code` (default 131000); `dropConnection` applies the call, then destroys the socket
 *   POST /_control/media { mediaId, content?, bytes?, mimeType? }   what the media endpoints serve
 *   GET  /_control/messages?to=   texts delivered, in order: { to, text, recipientType, contextId, id, at }
 *   GET  /_control/calls?api=     recorded calls (token redacted to its last 4)
 *   POST /_control/reset
 */

export interface FakeGraphApi {
  url: string;
  stop(): Promise<void>;
}

interface Script {
  api: string;
  to?: string;
  times: number;
  status?: number;
  code?: number;
  dropConnection?: boolean;
}

interface Delivered {
  to: string;
  text: string;
  recipientType: string;
  contextId?: string;
  phoneNumberId: string;
  id: string;
  at: number;
}

interface Call {
  api: string;
  to?: string;
  body: unknown;
  token: string;
  status: number;
  at: number;
}

const TEXT_LIMIT = 4096;

function graphError(code: number, message: string, extra: Record<string, unknown> = {}) {
  return {
    error: {
      message: `(#${code}) ${message}`,
      type: "OAuthException",
      code,
      ...extra,
      fbtrace_id: randomBytes(8).toString("base64url"),
    },
  };
}

export async function startFakeGraphApi(): Promise<FakeGraphApi> {
  let calls: Call[] = [];
  let delivered: Delivered[] = [];
  let scripts: Script[] = [];
  const media = new Map<string, { body: Buffer; mimeType: string }>();

  const server = fakeServer(handle);
  let selfUrl = "";

  async function handle(req: IncomingMessage, res: ServerResponse, url: URL, raw: string) {
    if (url.pathname.startsWith("/_control/")) return control(url, req.method ?? "GET", raw, res);
    const auth = String(req.headers.authorization ?? "");
    const token = auth.startsWith("Bearer ") ? auth.slice(7) : "";
    const send = /^\/v\d+\.\d+\/(\d+)\/messages$/.exec(url.pathname);
    const mediaNode = /^\/v\d+\.\d+\/([^/]+)$/.exec(url.pathname);
    const lookaside = /^\/_lookaside\/([^/]+)$/.exec(url.pathname);
    let body: Record<string, unknown> = {};
    if (send) {
      try {
        body = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        return json(res, 400, graphError(100, "Invalid parameter"));
      }
    }
    const api = send
      ? body.status === "read"
        ? "read"
        : "send"
      : req.method === "GET" && (mediaNode || lookaside)
        ? "media"
        : undefined;
    if (!api) return json(res, 400, graphError(100, "Unsupported request"));
    const to = typeof body.to === "string" ? body.to : undefined;
    const call: Call = {
      api,
      to,
      body,
      token: token ? `…${token.slice(-4)}` : "",
      status: 0,
      at: Date.now(),
    };
    calls.push(call);
    const answer = (status: number, payload: unknown) => {
      call.status = status;
      return json(res, status, payload);
    };
    if (!token || token.startsWith("revoked"))
      return answer(401, graphError(190, "Invalid OAuth access token - Cannot parse access token"));

    const script = scripts.find((s) => s.api === api && (!s.to || s.to === to) && s.times > 0);
    if (script) {
      script.times -= 1;
      if (!script.dropConnection)
        return answer(
          script.status ?? 500,
          graphError(script.code ?? 131000, "Something went wrong", {
            error_data: { messaging_product: "whatsapp", details: "scripted failure" },
          }),
        );
    }
    const dropped = () => {
      if (!script?.dropConnection) return false;
      req.socket.destroy();
      return true;
    };

    if (api === "media") {
      const id = decodeURIComponent((lookaside ?? mediaNode)![1]!);
      const file = media.get(id);
      if (!file)
        return answer(
          400,
          graphError(100, `Unsupported get request. Object with ID '${id}' does not exist`, {
            error_subcode: 33,
          }),
        );
      if (dropped()) return;
      if (lookaside) {
        call.status = 200;
        res.writeHead(200, {
          "content-type": file.mimeType,
          "content-length": String(file.body.byteLength),
        });
        return res.end(file.body);
      }
      return answer(200, {
        messaging_product: "whatsapp",
        url: `${selfUrl}/_lookaside/${encodeURIComponent(id)}`,
        mime_type: file.mimeType,
        sha256: "0".repeat(64),
        file_size: file.body.byteLength,
        id,
      });
    }

    if (body.messaging_product !== "whatsapp")
      return answer(400, graphError(100, "The parameter messaging_product is required."));
    if (api === "read") {
      if (typeof body.message_id !== "string")
        return answer(400, graphError(100, "The parameter message_id is required."));
      if (dropped()) return;
      return answer(200, { success: true });
    }
    if (!to) return answer(400, graphError(100, "The parameter to is required."));
    if (body.type !== "text") return answer(400, graphError(131051, "Unsupported message type"));
    const text = (body.text as { body?: unknown } | undefined)?.body;
    if (typeof text !== "string" || !text)
      return answer(400, graphError(100, "The parameter text['body'] is required."));
    if (text.length > TEXT_LIMIT)
      return answer(
        400,
        graphError(100, `Param text['body'] must be at most ${TEXT_LIMIT} characters long.`),
      );
    const id = `wamid.${randomBytes(18).toString("base64url")}`;
    delivered.push({
      to,
      text,
      recipientType: String(body.recipient_type ?? "individual"),
      contextId: (body.context as { message_id?: string } | undefined)?.message_id,
      phoneNumberId: send![1]!,
      id,
      at: Date.now(),
    });
    if (dropped()) return;
    return answer(200, {
      messaging_product: "whatsapp",
      contacts: [{ input: to, wa_id: to }],
      messages: [{ id }],
    });
  }

  async function control(url: URL, method: string, raw: string, res: ServerResponse) {
    const body = controlBody(raw);
    switch (url.pathname) {
      case "/_control/script":
        scripts.push({ ...(body as unknown as Script), times: Number(body.times ?? 1) });
        return json(res, 200, { ok: true });
      case "/_control/media":
        media.set(String(body.mediaId), {
          body:
            body.bytes !== undefined
              ? Buffer.alloc(Number(body.bytes), "a")
              : Buffer.from(String(body.content ?? ""), "utf8"),
          mimeType: String(body.mimeType ?? "text/plain"),
        });
        return json(res, 200, { ok: true });
      case "/_control/messages": {
        const to = url.searchParams.get("to");
        return json(
          res,
          200,
          delivered.filter((m) => !to || m.to === to),
        );
      }
      case "/_control/calls": {
        const api = url.searchParams.get("api");
        return json(
          res,
          200,
          calls.filter((c) => !api || c.api === api),
        );
      }
      case "/_control/reset":
        if (method !== "POST") break;
        calls = [];
        delivered = [];
        scripts = [];
        media.clear();
        return json(res, 200, { ok: true });
    }
    return json(res, 404, { error: "unknown control endpoint" });
  }

  const started = await listenOnLoopback(server);
  selfUrl = started.url;
  return started;
}
