import type { IncomingMessage, ServerResponse } from "node:http";
import { controlBody, fakeServer, parseMultipart } from "../../../../scripts/simulate/fakes/kit.ts";
import { listenOnLoopback } from "../../../../scripts/simulate/fakes/listen.ts";
import { mattermostControl } from "./mattermost-control.ts";
import { FAKE_MATTERMOST_BOT } from "./mattermost-identity.ts";
import { restApi } from "./mattermost-rest.ts";
import { MattermostFakeState } from "./mattermost-state.ts";
import { acceptSockets } from "./mattermost-websocket.ts";

export type {
  FakeMattermostCommand,
  FakeMattermostFile,
  FakeMattermostPost,
} from "./mattermost-records.ts";
export { FAKE_MATTERMOST_TEAMS } from "./mattermost-records.ts";

/**
 * A fake Mattermost server on loopback: REST v4 and the WebSocket, in their wire formats.
 * - REST with `Authorization: Bearer <token>` (unknown token → 401 `api.context.session_expired.app_error`):
 *   GET /api/v4/users/me, GET /api/v4/channels/{id}, POST /api/v4/posts (201; a repeated
 *   `pending_post_id` within 30 s answers the first post, as the server's deduplicateCreatePost),
 *   POST /api/v4/files (multipart `channel_id`, `files`, `client_ids` → 201 `{ file_infos, client_ids }`;
 *   a post's `file_ids` must be files of its channel not yet attached, at most 5),
 *   PUT /api/v4/posts/{id}/patch, DELETE /api/v4/posts/{id}, POST /api/v4/users/{id}/typing,
 *   GET /api/v4/channels/{id}/posts?since=<ms> and GET /api/v4/posts/{id}/thread ({ order, posts }).
 *   Slash commands: GET /api/v4/users/me/teams (team1, team2), GET /api/v4/commands?team_id=&custom_only=true,
 *   POST /api/v4/commands (201, a fresh token, creator = the caller), PUT /api/v4/commands/{id},
 *   PUT /api/v4/commands/{id}/regen_token.
 * - WebSocket /api/v4/websocket: the client sends `{ seq, action: "authentication_challenge", data: { token } }`;
 *   the server answers `{ status: "OK", seq_reply }` then the `hello` event; every event carries the
 *   connection's `seq`, from 0. A wrong token → `{ status: "FAIL", seq_reply, error }` and close.
 *   Every post created (by the bot or a user) is broadcast as `posted` with `data.post` a JSON string.
 *
 * Control (plain fetch):
 *   POST /_control/user-post {channel_id, channel_type, user_id, message, root_id?, sender_name?, broadcast?}
 *        a user's post: stored and (unless broadcast:false) sent as `posted` (with `mentions` when it @s the bot)
 *   POST /_control/event {event, data, broadcast, skipSeq?}   any raw event to every socket (skipSeq: one seq number skipped first)
 *   POST /_control/channel {id, type}               a channel's type (D/G/O/P) for GET /channels/{id}
 *   POST /_control/script {method, path, times?, status?, dropConnection?}  next calls fail (path = prefix)
 *   POST /_control/drop-sockets                      terminate every WebSocket (a network drop)
 *   POST /_control/command {team_id, trigger, url, creator_id}   a command another integration made
 *   GET  /_control/posts?channel=  GET /_control/calls?path=  GET /_control/sockets  GET /_control/commands (tokens included)
 */

export { FAKE_MATTERMOST_BOT };

export interface FakeMattermost {
  url: string;
  stop(): Promise<void>;
}

export async function startFakeMattermost(
  /** The bot tokens it takes: a list (default the test suite's), or a check (`simulate` takes any). */
  options: { tokens?: string[] | ((token: string) => boolean) } = {},
): Promise<FakeMattermost> {
  const state = new MattermostFakeState(options.tokens ?? ["mm-test-token"]);
  const server = fakeServer(
    async (req: IncomingMessage, res: ServerResponse, url: URL, raw: string, bytes: Buffer) => {
      const upload = await parseMultipart(req.headers["content-type"], bytes);
      const body: Record<string, unknown> = upload ? upload.fields : controlBody(raw);
      if (url.pathname.startsWith("/_control/")) return mattermostControl(state, url, body, res);
      return restApi(state, req, res, url, body, upload);
    },
  );
  const wss = acceptSockets(state, server);

  const listening = await listenOnLoopback(server);
  return {
    url: listening.url,
    stop: async () => {
      for (const socket of state.sockets) socket.ws.terminate();
      await new Promise((resolve) => wss.close(resolve));
      await listening.stop();
    },
  };
}
