import type { ServerResponse } from "node:http";
import { json } from "../../../../scripts/simulate/fakes/kit.ts";
import type { MattermostFakeState } from "./mattermost-state.ts";
import { broadcast, postedEvent } from "./mattermost-websocket.ts";

/** The fake Mattermost's `/_control/…` endpoints: what tests post, script and read back. */
export function mattermostControl(
  state: MattermostFakeState,
  url: URL,
  body: Record<string, unknown>,
  res: ServerResponse,
) {
  switch (url.pathname) {
    case "/_control/user-post": {
      const post = state.createPost({
        user_id: String(body.user_id),
        channel_id: String(body.channel_id),
        message: String(body.message ?? ""),
        root_id: String(body.root_id ?? ""),
      });
      state.channels.set(post.channel_id, String(body.channel_type ?? "O"));
      if (body.broadcast !== false)
        postedEvent(
          state,
          post,
          String(body.channel_type ?? "O"),
          `@${String(body.sender_name ?? "someone")}`,
        );
      return json(res, 200, post);
    }
    case "/_control/event":
      // skipSeq: the server "loses" one event on every socket (a gap in seq the client must notice).
      if (body.skipSeq === true) for (const socket of state.sockets) socket.seq += 1;
      broadcast(
        state,
        String(body.event),
        (body.data ?? {}) as Record<string, unknown>,
        (body.broadcast ?? {}) as Record<string, unknown>,
      );
      return json(res, 200, {});
    case "/_control/channel":
      state.channels.set(String(body.id), String(body.type));
      return json(res, 200, {});
    case "/_control/script":
      state.scripts.push({
        method: String(body.method),
        path: String(body.path),
        times: Number(body.times ?? 1),
        status: body.status as number | undefined,
        dropConnection: body.dropConnection === true,
      });
      return json(res, 200, {});
    case "/_control/drop-sockets":
      for (const socket of state.sockets) socket.ws.terminate();
      return json(res, 200, {});
    case "/_control/posts": {
      const channel = url.searchParams.get("channel");
      return json(
        res,
        200,
        [...state.posts.values()].filter((p) => !channel || p.channel_id === channel),
      );
    }
    case "/_control/calls": {
      const prefix = url.searchParams.get("path") ?? "";
      return json(
        res,
        200,
        state.calls.filter((c) => c.path.startsWith(prefix)),
      );
    }
    case "/_control/command": {
      const command = state.newCommand({
        creator_id: String(body.creator_id),
        team_id: String(body.team_id),
        trigger: String(body.trigger),
        method: "P",
        url: String(body.url ?? "https://other.example/hook"),
      });
      return json(res, 200, command);
    }
    case "/_control/commands":
      return json(res, 200, [...state.commands.values()]);
    case "/_control/sockets":
      return json(res, 200, { open: [...state.sockets].filter((s) => s.authed).length });
  }
  return json(res, 404, { id: "control", message: "unknown control endpoint", status_code: 404 });
}
