import type { IncomingMessage, ServerResponse } from "node:http";
import { json } from "../../../../scripts/simulate/fakes/kit.ts";
import { commandRoutes } from "./mattermost-commands.ts";
import { FAKE_MATTERMOST_BOT } from "./mattermost-identity.ts";
import { postRoutes } from "./mattermost-posts.ts";
import { teamOf } from "./mattermost-records.ts";
import type { RestRequest } from "./mattermost-rest-request.ts";
import { apiError, type MattermostFakeState } from "./mattermost-state.ts";

/**
 * REST v4: the bearer token (unknown → 401 session_expired), the recorded call, any scripted
 * failure (`dropConnection`: applied, then the socket destroyed), then the route: users/me,
 * channels/{id} and typing here, slash commands and posts in their own files.
 */
export function restApi(
  state: MattermostFakeState,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  body: Record<string, unknown>,
  upload: RestRequest["upload"],
) {
  const error = (status: number, id: string, message: string) => apiError(res, status, id, message);
  if (!url.pathname.startsWith("/api/v4/"))
    return error(404, "api.context.404.app_error", "not found");
  const path = url.pathname.slice("/api/v4".length);
  const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
  if (!token || !state.tokens.has(token))
    return error(
      401,
      "api.context.session_expired.app_error",
      "Invalid or expired session, please login again.",
    );
  state.calls.push({ method: req.method ?? "GET", path: `${path}${url.search}`, body });
  const script = state.scripts.find(
    (s) => s.method === req.method && path.startsWith(s.path) && s.times > 0,
  );
  let drop = false;
  if (script) {
    script.times -= 1;
    state.scripts = state.scripts.filter((s) => s.times > 0);
    if (script.dropConnection) drop = true;
    else return error(script.status ?? 500, "fake.scripted", "scripted failure");
  }
  const answer = (status: number, value: unknown) =>
    drop ? void req.socket.destroy() : json(res, status, value);

  let match: RegExpExecArray | null;
  if (req.method === "GET" && path === "/users/me")
    return answer(200, { ...FAKE_MATTERMOST_BOT, is_bot: true });
  if (req.method === "GET" && (match = /^\/channels\/([^/]+)$/.exec(path))) {
    const type = state.channels.get(match[1]!);
    return type
      ? answer(200, { id: match[1], type, team_id: teamOf(type) })
      : error(404, "app.channel.get.existing.app_error", "channel not found");
  }
  if (req.method === "POST" && /^\/users\/[^/]+\/typing$/.test(path))
    return answer(200, { status: "OK" });
  const call: RestRequest = { state, method: req.method, path, url, body, upload, answer, error };
  if (path === "/users/me/teams" || /^\/commands(\/|$)/.test(path)) return commandRoutes(call);
  return postRoutes(call);
}
