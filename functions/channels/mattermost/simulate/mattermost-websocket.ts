import type { Server } from "node:http";
import { WebSocketServer } from "ws";
import { FAKE_MATTERMOST_BOT } from "./mattermost-identity.ts";
import { type FakeMattermostPost, teamOf } from "./mattermost-records.ts";
import type { MattermostFakeState } from "./mattermost-state.ts";

/**
 * The fake Mattermost's WebSocket (/api/v4/websocket): the authentication challenge, the `hello`
 * event, and the events it broadcasts to every authenticated socket, each with that connection's
 * next `seq`.
 */

/** An event to every authenticated socket. */
export function broadcast(
  state: MattermostFakeState,
  event: string,
  data: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) {
  for (const socket of state.sockets) {
    if (!socket.authed) continue;
    socket.ws.send(
      JSON.stringify({
        event,
        data,
        broadcast: { omit_users: null, user_id: "", channel_id: "", team_id: "", ...extra },
        seq: socket.seq++,
      }),
    );
  }
}

/** A `posted` event for a post (with `mentions` when it @s the bot), as Mattermost sends it. */
export function postedEvent(
  state: MattermostFakeState,
  post: FakeMattermostPost,
  channelType: string,
  senderName: string,
) {
  const mentions = new RegExp(`@${FAKE_MATTERMOST_BOT.username}\\b`, "i").test(post.message)
    ? { mentions: JSON.stringify([FAKE_MATTERMOST_BOT.id]) }
    : {};
  broadcast(
    state,
    "posted",
    {
      channel_display_name: "",
      channel_name: "",
      channel_type: channelType,
      post: JSON.stringify(post),
      sender_name: senderName,
      set_online: true,
      team_id: teamOf(channelType),
      ...mentions,
    },
    { channel_id: post.channel_id },
  );
}

/** Takes WebSocket upgrades on the server; the returned server is closed on stop. */
export function acceptSockets(state: MattermostFakeState, server: Server): WebSocketServer {
  const wss = new WebSocketServer({ noServer: true });
  server.on("upgrade", (req, socket, head) => {
    if (!req.url?.startsWith("/api/v4/websocket")) return void socket.destroy();
    wss.handleUpgrade(req, socket, head, (ws) => {
      const client = { ws, seq: 0, authed: false };
      state.sockets.add(client);
      ws.on("close", () => state.sockets.delete(client));
      ws.on("message", (data) => {
        const frame = JSON.parse(data.toString()) as {
          seq?: number;
          action?: string;
          data?: { token?: string };
        };
        if (frame.action !== "authentication_challenge") return;
        if (!frame.data?.token || !state.tokens.has(frame.data.token)) {
          ws.send(
            JSON.stringify({
              status: "FAIL",
              seq_reply: frame.seq,
              error: {
                id: "api.web_socket_router.not_authenticated.app_error",
                message: "not authenticated",
              },
            }),
          );
          return void ws.close(1008);
        }
        ws.send(JSON.stringify({ status: "OK", seq_reply: frame.seq }));
        client.authed = true;
        ws.send(
          JSON.stringify({
            event: "hello",
            data: { server_version: "10.5.0.fake", connection_id: state.newId() },
            broadcast: { user_id: FAKE_MATTERMOST_BOT.id },
            seq: client.seq++,
          }),
        );
      });
    });
  });
  return wss;
}
