import type { Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { json } from "../../../../scripts/simulate/fakes/kit.ts";
import { DEFAULT_IDENTITY, type Script } from "./slack-records.ts";
import type { FakeSlackSocketMode } from "./slack-socket.ts";
import type { SlackFakeState } from "./slack-state.ts";

/** The fake Slack's `/_control/…` endpoints: what tests script, seed and read back. */
export function slackControl(
  state: SlackFakeState,
  socketMode: FakeSlackSocketMode,
  server: Server,
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
    state.identities.clear();
    return json(res, 200, { ok: true });
  }
  if (path === "socket-envelope" && method === "POST") {
    const live = socketMode.live;
    if (!live) return json(res, 409, { ok: false, error: "no Socket Mode connection is open" });
    socketMode.send(live, (JSON.parse(body) as { envelope: unknown }).envelope);
    return json(res, 200, { ok: true });
  }
  if (path === "script" && method === "POST") {
    const script = JSON.parse(body) as Partial<Script> & { method: string };
    state.scripts.push({ times: 1, ...script });
    return json(res, 200, { ok: true });
  }
  if (path === "flood" && method === "POST") {
    const flood = JSON.parse(body) as { channel: string; count: number; thread_ts?: string };
    for (let i = 0; i < flood.count; i++) {
      state.messages.push({
        channel: flood.channel,
        ts: state.nextTs(),
        text: `chatter ${i}`,
        thread_ts: flood.thread_ts,
        user: "UCHATTY",
        bot_id: "",
      });
    }
    return json(res, 200, { ok: true });
  }
  if (path === "file" && method === "POST") {
    const file = JSON.parse(body) as {
      path: string;
      content?: string;
      contentBase64?: string;
      contentType?: string;
      redirectTo?: string;
      bytes?: number;
      contentLength?: number;
    };
    state.files.set(file.path, {
      ...file,
      content: file.content ?? "",
      contentType: file.contentType ?? "text/plain",
    });
    return json(res, 200, {
      ok: true,
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${file.path}`,
    });
  }
  if (path === "identity" && method === "POST") {
    const { token, ...identity } = JSON.parse(body) as {
      token: string;
    } & typeof DEFAULT_IDENTITY;
    state.identities.set(token, { ...DEFAULT_IDENTITY, ...identity });
    return json(res, 200, { ok: true });
  }
  const channel = url.searchParams.get("channel");
  if (path === "calls") {
    const only = url.searchParams.get("method");
    return json(
      res,
      200,
      state.calls.filter(
        (c) => (!only || c.method === only) && (!channel || c.args.channel === channel),
      ),
    );
  }
  if (path === "count")
    return json(res, 200, { messages: state.messages.filter((m) => !m.deleted).length });
  if (path === "messages")
    return json(
      res,
      200,
      state.messages.filter((m) => !channel || m.channel === channel),
    );
  return json(res, 404, { error: "unknown control endpoint" });
}
