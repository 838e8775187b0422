import type { Server, ServerResponse } from "node:http";
import { randomBytes } from "node:crypto";
import { API, type Media, type Script } from "./twilio-records.ts";
import type { TwilioFakeState } from "./twilio-state.ts";
import { present, send } from "./twilio-wire.ts";

/** The fake Twilio's `/_control/…` endpoints: what tests register, script, seed and read back. */
export function twilioControl(
  state: TwilioFakeState,
  server: Server,
  url: URL,
  method: string,
  body: string,
  res: ServerResponse,
) {
  const path = url.pathname.slice("/_control/".length);
  const origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  if (path === "reset" && method === "POST") {
    state.calls = [];
    state.messages = [];
    state.scripts = [];
    state.media = new Map();
    return send(res, 200, { ok: true });
  }
  if (path === "account" && method === "POST") {
    const { accountSid, authToken } = JSON.parse(body) as {
      accountSid: string;
      authToken: string;
    };
    state.accounts.set(accountSid, authToken);
    return send(res, 200, { ok: true });
  }
  if (path === "script" && method === "POST") {
    state.scripts.push({ times: 1, ...(JSON.parse(body) as Partial<Script> & { method: string }) });
    return send(res, 200, { ok: true });
  }
  if (path === "media" && method === "POST") {
    const item = JSON.parse(body) as Partial<Media> & { accountSid: string };
    const id = `ME${randomBytes(16).toString("hex")}`;
    const messageSid = `MM${randomBytes(16).toString("hex")}`;
    state.media.set(id, { content: "", contentType: "text/plain", ...item });
    return send(res, 200, {
      url: `${origin}${API}/Accounts/${item.accountSid}/Messages/${messageSid}/Media/${id}`,
      messageSid,
    });
  }
  if (path === "seed" && method === "POST") {
    const seedMessage = JSON.parse(body) as {
      accountSid: string;
      to: string;
      from: string;
      body: string;
      ageMs?: number;
    };
    const created = Date.now() - (seedMessage.ageMs ?? 0);
    state.messages.push({
      sid: `SM${randomBytes(16).toString("hex")}`,
      account_sid: seedMessage.accountSid,
      to: seedMessage.to,
      from: seedMessage.from,
      messaging_service_sid: null,
      body: seedMessage.body,
      status: "delivered",
      direction: "outbound-api",
      created,
      sent: created,
      seq: ++state.seq,
      num_media: "0",
    });
    return send(res, 200, { ok: true });
  }
  const to = url.searchParams.get("to");
  if (path === "calls") {
    const only = url.searchParams.get("method");
    return send(
      res,
      200,
      state.calls.filter((c) => (!only || c.method === only) && (!to || c.args.To === to)),
    );
  }
  if (path === "messages")
    return send(
      res,
      200,
      state.messages
        .filter((m) => !to || m.to === to)
        .sort((a, b) => a.seq - b.seq)
        .map((m) => ({
          ...present(m),
          media_urls: m.media_urls,
          media_fetched: m.media_fetched,
        })),
    );
  return send(res, 404, { error: "unknown control endpoint" });
}
