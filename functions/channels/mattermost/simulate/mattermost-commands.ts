import { FAKE_MATTERMOST_BOT } from "./mattermost-identity.ts";
import { FAKE_MATTERMOST_TEAMS } from "./mattermost-records.ts";
import type { RestRequest } from "./mattermost-rest-request.ts";

/**
 * The fake Mattermost's slash-command routes: GET /users/me/teams, GET /commands?team_id=,
 * POST /commands (a fresh token, the caller as creator; a trigger in use → 400), PUT
 * /commands/{id} (the creator only) and PUT /commands/{id}/regen_token.
 */
export function commandRoutes({ state, method, path, url, body, answer, error }: RestRequest) {
  let match: RegExpExecArray | null;
  if (method === "GET" && path === "/users/me/teams") return answer(200, FAKE_MATTERMOST_TEAMS);
  if (method === "GET" && path === "/commands") {
    const team = url.searchParams.get("team_id");
    return answer(
      200,
      [...state.commands.values()].filter((c) => c.team_id === team && !c.delete_at),
    );
  }
  if (method === "POST" && path === "/commands") {
    const team = String(body.team_id ?? "");
    const trigger = String(body.trigger ?? "");
    if (!FAKE_MATTERMOST_TEAMS.some((t) => t.id === team))
      return error(403, "api.context.permissions.app_error", "not a member of the team");
    if (
      [...state.commands.values()].some(
        (c) => c.team_id === team && c.trigger === trigger && !c.delete_at,
      )
    )
      return error(
        400,
        "api.command.duplicate_trigger.app_error",
        "This trigger word is already in use",
      );
    const command = state.newCommand({
      creator_id: FAKE_MATTERMOST_BOT.id,
      team_id: team,
      trigger,
      method: String(body.method ?? "P"),
      url: String(body.url ?? ""),
      display_name: String(body.display_name ?? ""),
      description: String(body.description ?? ""),
      auto_complete: body.auto_complete === true,
      auto_complete_desc: String(body.auto_complete_desc ?? ""),
      auto_complete_hint: String(body.auto_complete_hint ?? ""),
    });
    return answer(201, command);
  }
  if (method === "PUT" && (match = /^\/commands\/([^/]+)\/regen_token$/.exec(path))) {
    const command = state.commands.get(match[1]!);
    if (!command) return error(404, "app.command.get.app_error", "command not found");
    command.token = state.newId();
    return answer(200, { token: command.token });
  }
  if (method === "PUT" && (match = /^\/commands\/([^/]+)$/.exec(path))) {
    const command = state.commands.get(match[1]!);
    if (!command) return error(404, "app.command.get.app_error", "command not found");
    if (command.creator_id !== FAKE_MATTERMOST_BOT.id)
      return error(403, "api.command.update.app_error", "not the creator");
    Object.assign(command, {
      url: String(body.url ?? command.url),
      method: String(body.method ?? command.method),
      description: String(body.description ?? command.description),
      update_at: state.now(),
    });
    return answer(200, command);
  }
  return error(404, "api.context.404.app_error", `no fake for ${method} ${path}`);
}
