import type { ServerResponse } from "node:http";
import { controlBody, json } from "../../../../scripts/simulate/fakes/kit.ts";
import type { FakeDiscordGateway } from "./discord-gateway.ts";
import { nextSnowflake, type Script } from "./discord-records.ts";
import type { DiscordFakeState } from "./discord-state.ts";

/** The fake Discord's `/_control/…` endpoints: what tests script, seed and read back. */
export function discordControl(
  state: DiscordFakeState,
  gateway: FakeDiscordGateway,
  url: URL,
  method: string,
  raw: string,
  res: ServerResponse,
) {
  const body = controlBody(raw);
  switch (`${method} ${url.pathname}`) {
    case "POST /_control/script":
      state.scripts.push({ times: 1, ...(body as Partial<Script>), route: String(body.route) });
      return json(res, 200, { ok: true });
    case "GET /_control/calls": {
      const route = url.searchParams.get("route");
      const channelId = url.searchParams.get("channel_id");
      return json(
        res,
        200,
        state.calls.filter(
          (c) => (!route || c.route === route) && (!channelId || c.channelId === channelId),
        ),
      );
    }
    case "GET /_control/messages": {
      const channelId = url.searchParams.get("channel_id");
      const interaction = url.searchParams.get("interaction");
      return json(
        res,
        200,
        state.messages.filter(
          (m) =>
            (!channelId || m.channel_id === channelId) &&
            (!interaction || m.interaction?.endsWith(interaction.slice(-8))),
        ),
      );
    }
    case "POST /_control/seed": {
      const at = Number(body.at ?? Date.now());
      const id = nextSnowflake(at);
      const author = { id: String(body.authorId), username: "edgeclaw", bot: true as const };
      state.messages.push({
        id,
        channel_id: String(body.channelId),
        author,
        content: String(body.content ?? ""),
        edits: 0,
        at,
      });
      return json(res, 200, { id });
    }
    case "POST /_control/file":
      state.files.set(String(body.path), {
        body: String(body.body ?? ""),
        ...(body.contentType ? { contentType: String(body.contentType) } : {}),
        ...(body.redirect ? { redirect: String(body.redirect) } : {}),
        ...(body.understateLength ? { understateLength: true } : {}),
      });
      return json(res, 200, { ok: true });
    case "GET /_control/downloads":
      return json(
        res,
        200,
        state.downloads.filter((d) => d.path === url.searchParams.get("path")),
      );
    case "POST /_control/ratelimit":
      state.limits.set(String(body.channelId), {
        limit: Number(body.limit),
        resetAfter: Number(body.resetAfter),
        remaining: 0,
        resetAt: 0,
        refused: 0,
      });
      return json(res, 200, { ok: true });
    case "GET /_control/ratelimit":
      return json(res, 200, state.limits.get(url.searchParams.get("channel_id") ?? "") ?? null);
    case "POST /_control/gateway":
      state.gatewayUrl = String(body.url);
      return json(res, 200, { ok: true });
    case "POST /_control/dispatch":
      if (!gateway.live)
        return json(res, 409, { error: "no Gateway session: no client has identified yet" });
      return json(res, 200, { s: gateway.dispatch(String(body.t), body.d) });
    case "POST /_control/reset":
      state.calls = [];
      state.messages = [];
      state.scripts = [];
      state.limits = new Map();
      state.files = new Map();
      state.downloads = [];
      return json(res, 200, { ok: true });
    default:
      return json(res, 404, { error: "unknown control endpoint" });
  }
}
