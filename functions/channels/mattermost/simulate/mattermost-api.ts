import { createHash, randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { WebSocketServer, type WebSocket } from "ws";
import {
  controlBody,
  fakeServer,
  json,
  parseMultipart,
} from "../../../../scripts/simulate/fakes/kit.ts";
import { listenOnLoopback } from "../../../../scripts/simulate/fakes/listen.ts";
import { FAKE_MATTERMOST_BOT } from "./mattermost-identity.ts";

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

export interface FakeMattermostPost {
  id: string;
  create_at: number;
  update_at: number;
  edit_at: number;
  delete_at: number;
  user_id: string;
  channel_id: string;
  root_id: string;
  message: string;
  type: string;
  props: Record<string, unknown>;
  pending_post_id?: string;
  file_ids?: string[];
  metadata?: { files: FakeMattermostFile[] };
}

/** A file uploaded with POST /api/v4/files (bytes kept as size and SHA-256). */
export interface FakeMattermostFile {
  id: string;
  user_id: string;
  channel_id: string;
  post_id?: string;
  name: string;
  extension: string;
  size: number;
  mime_type: string;
  create_at: number;
  sha256: string;
}

export interface FakeMattermostCommand {
  id: string;
  token: string;
  create_at: number;
  update_at: number;
  delete_at: number;
  creator_id: string;
  team_id: string;
  trigger: string;
  method: string;
  url: string;
  display_name: string;
  description: string;
  auto_complete: boolean;
  auto_complete_desc: string;
  auto_complete_hint: string;
}

/** The teams the bot belongs to. */
export const FAKE_MATTERMOST_TEAMS = [
  { id: "team1", name: "team-one", display_name: "Team One" },
  { id: "team2", name: "team-two", display_name: "Team Two" },
];

interface Script {
  method: string;
  path: string;
  times: number;
  status?: number;
  dropConnection?: boolean;
}

export interface FakeMattermost {
  url: string;
  stop(): Promise<void>;
}

/** Every channel of the fake is in team "team1"; DMs and group messages belong to no team, as in Mattermost. */
function teamOf(channelType: string): string {
  return channelType === "D" || channelType === "G" ? "" : "team1";
}

export async function startFakeMattermost(
  /** The bot tokens it takes: a list (default the test suite's), or a check (`simulate` takes any). */
  options: { tokens?: string[] | ((token: string) => boolean) } = {},
): Promise<FakeMattermost> {
  const given = options.tokens ?? ["mm-test-token"];
  const tokens = {
    has: typeof given === "function" ? given : (token: string) => given.includes(token),
  };
  const posts = new Map<string, FakeMattermostPost>();
  const channels = new Map<string, string>();
  const pending = new Map<string, { postId: string; at: number }>();
  const files = new Map<string, FakeMattermostFile>();
  const calls: Array<{ method: string; path: string; body: unknown }> = [];
  let scripts: Script[] = [];
  const sockets = new Set<{ ws: WebSocket; seq: number; authed: boolean }>();
  const commands = new Map<string, FakeMattermostCommand>();
  let clock = Date.now();
  const now = () => (clock = Math.max(clock + 1, Date.now()));
  const newId = () => randomBytes(13).toString("hex");

  const broadcast = (
    event: string,
    data: Record<string, unknown>,
    extra: Record<string, unknown> = {},
  ) => {
    for (const socket of sockets) {
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
  };
  const createPost = (fields: {
    user_id: string;
    channel_id: string;
    message: string;
    root_id?: string;
    props?: Record<string, unknown>;
    pending_post_id?: string;
  }) => {
    const at = now();
    const post: FakeMattermostPost = {
      id: newId(),
      create_at: at,
      update_at: at,
      edit_at: 0,
      delete_at: 0,
      root_id: "",
      type: "",
      props: {},
      ...fields,
    };
    posts.set(post.id, post);
    return post;
  };
  const postedEvent = (post: FakeMattermostPost, channelType: string, senderName: string) => {
    const mentions = new RegExp(`@${FAKE_MATTERMOST_BOT.username}\\b`, "i").test(post.message)
      ? { mentions: JSON.stringify([FAKE_MATTERMOST_BOT.id]) }
      : {};
    broadcast(
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
  };
  const listOf = (list: FakeMattermostPost[]) => ({
    order: list.map((p) => p.id),
    posts: Object.fromEntries(list.map((p) => [p.id, p])),
    next_post_id: "",
    prev_post_id: "",
  });

  const server = fakeServer(
    async (req: IncomingMessage, res: ServerResponse, url: URL, raw: string, bytes: Buffer) => {
      const upload = await parseMultipart(req.headers["content-type"], bytes);
      const body: Record<string, unknown> = upload ? upload.fields : controlBody(raw);
      const error = (status: number, id: string, message: string) =>
        json(res, status, { id, message, status_code: status });

      if (url.pathname.startsWith("/_control/")) {
        switch (url.pathname) {
          case "/_control/user-post": {
            const post = createPost({
              user_id: String(body.user_id),
              channel_id: String(body.channel_id),
              message: String(body.message ?? ""),
              root_id: String(body.root_id ?? ""),
            });
            channels.set(post.channel_id, String(body.channel_type ?? "O"));
            if (body.broadcast !== false)
              postedEvent(
                post,
                String(body.channel_type ?? "O"),
                `@${String(body.sender_name ?? "someone")}`,
              );
            return json(res, 200, post);
          }
          case "/_control/event":
            // skipSeq: the server "loses" one event on every socket (a gap in seq the client must notice).
            if (body.skipSeq === true) for (const socket of sockets) socket.seq += 1;
            broadcast(
              String(body.event),
              (body.data ?? {}) as Record<string, unknown>,
              (body.broadcast ?? {}) as Record<string, unknown>,
            );
            return json(res, 200, {});
          case "/_control/channel":
            channels.set(String(body.id), String(body.type));
            return json(res, 200, {});
          case "/_control/script":
            scripts.push({
              method: String(body.method),
              path: String(body.path),
              times: Number(body.times ?? 1),
              status: body.status as number | undefined,
              dropConnection: body.dropConnection === true,
            });
            return json(res, 200, {});
          case "/_control/drop-sockets":
            for (const socket of sockets) socket.ws.terminate();
            return json(res, 200, {});
          case "/_control/posts": {
            const channel = url.searchParams.get("channel");
            return json(
              res,
              200,
              [...posts.values()].filter((p) => !channel || p.channel_id === channel),
            );
          }
          case "/_control/calls": {
            const prefix = url.searchParams.get("path") ?? "";
            return json(
              res,
              200,
              calls.filter((c) => c.path.startsWith(prefix)),
            );
          }
          case "/_control/command": {
            const at = now();
            const command: FakeMattermostCommand = {
              id: newId(),
              token: newId(),
              create_at: at,
              update_at: at,
              delete_at: 0,
              creator_id: String(body.creator_id),
              team_id: String(body.team_id),
              trigger: String(body.trigger),
              method: "P",
              url: String(body.url ?? "https://other.example/hook"),
              display_name: "",
              description: "",
              auto_complete: false,
              auto_complete_desc: "",
              auto_complete_hint: "",
            };
            commands.set(command.id, command);
            return json(res, 200, command);
          }
          case "/_control/commands":
            return json(res, 200, [...commands.values()]);
          case "/_control/sockets":
            return json(res, 200, { open: [...sockets].filter((s) => s.authed).length });
        }
        return error(404, "control", "unknown control endpoint");
      }

      if (!url.pathname.startsWith("/api/v4/"))
        return error(404, "api.context.404.app_error", "not found");
      const path = url.pathname.slice("/api/v4".length);
      const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
      if (!token || !tokens.has(token))
        return error(
          401,
          "api.context.session_expired.app_error",
          "Invalid or expired session, please login again.",
        );
      calls.push({ method: req.method ?? "GET", path: `${path}${url.search}`, body });
      const script = scripts.find(
        (s) => s.method === req.method && path.startsWith(s.path) && s.times > 0,
      );
      let drop = false;
      if (script) {
        script.times -= 1;
        scripts = scripts.filter((s) => s.times > 0);
        if (script.dropConnection) drop = true;
        else return error(script.status ?? 500, "fake.scripted", "scripted failure");
      }
      const answer = (status: number, value: unknown) =>
        drop ? void req.socket.destroy() : json(res, status, value);

      let match: RegExpExecArray | null;
      if (req.method === "GET" && path === "/users/me")
        return answer(200, { ...FAKE_MATTERMOST_BOT, is_bot: true });
      if (req.method === "GET" && (match = /^\/channels\/([^/]+)$/.exec(path))) {
        const type = channels.get(match[1]!);
        return type
          ? answer(200, { id: match[1], type, team_id: teamOf(type) })
          : error(404, "app.channel.get.existing.app_error", "channel not found");
      }
      if (req.method === "POST" && path === "/files") {
        // Multipart: channel_id, then each `files` part (client_ids in the same order).
        if (!upload || !body.channel_id)
          return error(400, "api.file.upload_file.incorrect_number_of_files.app_error", "no files");
        const infos = upload.files
          .filter((f) => f.field === "files")
          .map((f) => {
            const info: FakeMattermostFile = {
              id: newId(),
              user_id: FAKE_MATTERMOST_BOT.id,
              channel_id: String(body.channel_id),
              name: f.name,
              extension: f.name.includes(".") ? f.name.split(".").pop()! : "",
              size: f.bytes.byteLength,
              mime_type: f.type,
              create_at: now(),
              sha256: createHash("sha256").update(f.bytes).digest("hex"),
            };
            files.set(info.id, info);
            return info;
          });
        if (!infos.length)
          return error(400, "api.file.upload_file.incorrect_number_of_files.app_error", "no files");
        const clientIds = typeof body.client_ids === "string" ? [body.client_ids] : [];
        return answer(201, { file_infos: infos, client_ids: clientIds });
      }
      if (req.method === "POST" && path === "/posts") {
        const message = String(body.message ?? "");
        const fileIds = Array.isArray(body.file_ids) ? body.file_ids.map(String) : [];
        const attached = fileIds.map((id) => files.get(id));
        // The server attaches a file to one post only, and only in the channel it was uploaded to.
        if (
          fileIds.length > 5 ||
          attached.some((f) => !f || f.post_id || f.channel_id !== String(body.channel_id))
        )
          return error(400, "api.post.create_post.attach_files.error", "invalid file_ids");
        if (!body.channel_id)
          return error(400, "api.context.invalid_body_param.app_error", "channel_id missing");
        if (message.length > 16_383)
          return error(400, "model.post.is_valid.msg.app_error", "message too long");
        const pendingId = typeof body.pending_post_id === "string" ? body.pending_post_id : "";
        const seen = pendingId ? pending.get(pendingId) : undefined;
        if (seen && Date.now() - seen.at < 30_000) return answer(201, posts.get(seen.postId));
        const post = createPost({
          user_id: FAKE_MATTERMOST_BOT.id,
          channel_id: String(body.channel_id),
          message,
          root_id: String(body.root_id ?? ""),
          props: (body.props ?? {}) as Record<string, unknown>,
        });
        if (fileIds.length) {
          post.file_ids = fileIds;
          post.metadata = { files: attached as FakeMattermostFile[] };
          for (const file of attached) file!.post_id = post.id;
        }
        if (pendingId) pending.set(pendingId, { postId: post.id, at: Date.now() });
        postedEvent(post, channels.get(post.channel_id) ?? "O", `@${FAKE_MATTERMOST_BOT.username}`);
        return answer(201, post);
      }
      if (req.method === "PUT" && (match = /^\/posts\/([^/]+)\/patch$/.exec(path))) {
        const post = posts.get(match[1]!);
        if (!post || post.delete_at) return error(404, "app.post.get.app_error", "post not found");
        post.message = String(body.message ?? post.message);
        post.edit_at = post.update_at = now();
        return answer(200, post);
      }
      if (req.method === "DELETE" && (match = /^\/posts\/([^/]+)$/.exec(path))) {
        const post = posts.get(match[1]!);
        if (!post || post.delete_at) return error(404, "app.post.get.app_error", "post not found");
        post.delete_at = now();
        return answer(200, { status: "OK" });
      }
      if (req.method === "POST" && /^\/users\/[^/]+\/typing$/.test(path))
        return answer(200, { status: "OK" });
      if (req.method === "GET" && path === "/users/me/teams")
        return answer(200, FAKE_MATTERMOST_TEAMS);
      if (req.method === "GET" && path === "/commands") {
        const team = url.searchParams.get("team_id");
        return answer(
          200,
          [...commands.values()].filter((c) => c.team_id === team && !c.delete_at),
        );
      }
      if (req.method === "POST" && path === "/commands") {
        const team = String(body.team_id ?? "");
        const trigger = String(body.trigger ?? "");
        if (!FAKE_MATTERMOST_TEAMS.some((t) => t.id === team))
          return error(403, "api.context.permissions.app_error", "not a member of the team");
        if (
          [...commands.values()].some(
            (c) => c.team_id === team && c.trigger === trigger && !c.delete_at,
          )
        )
          return error(
            400,
            "api.command.duplicate_trigger.app_error",
            "This trigger word is already in use",
          );
        const at = now();
        const command: FakeMattermostCommand = {
          id: newId(),
          token: newId(),
          create_at: at,
          update_at: at,
          delete_at: 0,
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
        };
        commands.set(command.id, command);
        return answer(201, command);
      }
      if (req.method === "PUT" && (match = /^\/commands\/([^/]+)\/regen_token$/.exec(path))) {
        const command = commands.get(match[1]!);
        if (!command) return error(404, "app.command.get.app_error", "command not found");
        command.token = newId();
        return answer(200, { token: command.token });
      }
      if (req.method === "PUT" && (match = /^\/commands\/([^/]+)$/.exec(path))) {
        const command = commands.get(match[1]!);
        if (!command) return error(404, "app.command.get.app_error", "command not found");
        if (command.creator_id !== FAKE_MATTERMOST_BOT.id)
          return error(403, "api.command.update.app_error", "not the creator");
        Object.assign(command, {
          url: String(body.url ?? command.url),
          method: String(body.method ?? command.method),
          description: String(body.description ?? command.description),
          update_at: now(),
        });
        return answer(200, command);
      }
      if (req.method === "GET" && (match = /^\/channels\/([^/]+)\/posts$/.exec(path))) {
        const since = Number(url.searchParams.get("since") ?? 0);
        const list = [...posts.values()]
          .filter((p) => p.channel_id === match![1] && p.update_at >= since && !p.delete_at)
          .sort((a, b) => b.create_at - a.create_at);
        return answer(200, listOf(list));
      }
      if (req.method === "GET" && (match = /^\/posts\/([^/]+)\/thread$/.exec(path))) {
        const root = match[1]!;
        return answer(
          200,
          listOf([...posts.values()].filter((p) => p.id === root || p.root_id === root)),
        );
      }
      return error(404, "api.context.404.app_error", `no fake for ${req.method} ${path}`);
    },
  );

  const wss = new WebSocketServer({ noServer: true });
  server.on("upgrade", (req, socket, head) => {
    if (!req.url?.startsWith("/api/v4/websocket")) return void socket.destroy();
    wss.handleUpgrade(req, socket, head, (ws) => {
      const client = { ws, seq: 0, authed: false };
      sockets.add(client);
      ws.on("close", () => sockets.delete(client));
      ws.on("message", (data) => {
        const frame = JSON.parse(data.toString()) as {
          seq?: number;
          action?: string;
          data?: { token?: string };
        };
        if (frame.action !== "authentication_challenge") return;
        if (!frame.data?.token || !tokens.has(frame.data.token)) {
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
            data: { server_version: "10.5.0.fake", connection_id: newId() },
            broadcast: { user_id: FAKE_MATTERMOST_BOT.id },
            seq: client.seq++,
          }),
        );
      });
    });
  });

  const listening = await listenOnLoopback(server);
  return {
    url: listening.url,
    stop: async () => {
      for (const socket of sockets) socket.ws.terminate();
      await new Promise((resolve) => wss.close(resolve));
      await listening.stop();
    },
  };
}
