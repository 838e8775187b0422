import { createHash } from "node:crypto";
import { FAKE_MATTERMOST_BOT } from "./mattermost-identity.ts";
import type { FakeMattermostFile, FakeMattermostPost } from "./mattermost-records.ts";
import type { RestRequest } from "./mattermost-rest-request.ts";
import { postedEvent } from "./mattermost-websocket.ts";

/**
 * The fake Mattermost's post routes: POST /files (multipart uploads), POST /posts (a repeated
 * `pending_post_id` within 30 s answers the first post; `file_ids` must be files of its channel
 * not yet attached, at most 5), PUT /posts/{id}/patch, DELETE /posts/{id},
 * GET /channels/{id}/posts?since= and GET /posts/{id}/thread.
 */
export function postRoutes({ state, method, path, url, body, upload, answer, error }: RestRequest) {
  let match: RegExpExecArray | null;
  if (method === "POST" && path === "/files") {
    // Multipart: channel_id, then each `files` part (client_ids in the same order).
    if (!upload || !body.channel_id)
      return error(
        400,
        "api.file.upload_file.incorrect_number_of_files.app_error",
        "no state.files",
      );
    const infos = upload.files
      .filter((f) => f.field === "files")
      .map((f) => {
        const info: FakeMattermostFile = {
          id: state.newId(),
          user_id: FAKE_MATTERMOST_BOT.id,
          channel_id: String(body.channel_id),
          name: f.name,
          extension: f.name.includes(".") ? f.name.split(".").pop()! : "",
          size: f.bytes.byteLength,
          mime_type: f.type,
          create_at: state.now(),
          sha256: createHash("sha256").update(f.bytes).digest("hex"),
        };
        state.files.set(info.id, info);
        return info;
      });
    if (!infos.length)
      return error(
        400,
        "api.file.upload_file.incorrect_number_of_files.app_error",
        "no state.files",
      );
    const clientIds = typeof body.client_ids === "string" ? [body.client_ids] : [];
    return answer(201, { file_infos: infos, client_ids: clientIds });
  }
  if (method === "POST" && path === "/posts") {
    const message = String(body.message ?? "");
    const fileIds = Array.isArray(body.file_ids) ? body.file_ids.map(String) : [];
    const attached = fileIds.map((id) => state.files.get(id));
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
    const seen = pendingId ? state.pending.get(pendingId) : undefined;
    if (seen && Date.now() - seen.at < 30_000) return answer(201, state.posts.get(seen.postId));
    const post = state.createPost({
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
    if (pendingId) state.pending.set(pendingId, { postId: post.id, at: Date.now() });
    postedEvent(
      state,
      post,
      state.channels.get(post.channel_id) ?? "O",
      `@${FAKE_MATTERMOST_BOT.username}`,
    );
    return answer(201, post);
  }
  if (method === "PUT" && (match = /^\/posts\/([^/]+)\/patch$/.exec(path))) {
    const post = state.posts.get(match[1]!);
    if (!post || post.delete_at) return error(404, "app.post.get.app_error", "post not found");
    post.message = String(body.message ?? post.message);
    post.edit_at = post.update_at = state.now();
    return answer(200, post);
  }
  if (method === "DELETE" && (match = /^\/posts\/([^/]+)$/.exec(path))) {
    const post = state.posts.get(match[1]!);
    if (!post || post.delete_at) return error(404, "app.post.get.app_error", "post not found");
    post.delete_at = state.now();
    return answer(200, { status: "OK" });
  }
  if (method === "GET" && (match = /^\/channels\/([^/]+)\/posts$/.exec(path))) {
    const since = Number(url.searchParams.get("since") ?? 0);
    const list = [...state.posts.values()]
      .filter((p) => p.channel_id === match![1] && p.update_at >= since && !p.delete_at)
      .sort((a, b) => b.create_at - a.create_at);
    return answer(200, listOf(list));
  }
  if (method === "GET" && (match = /^\/posts\/([^/]+)\/thread$/.exec(path))) {
    const root = match[1]!;
    return answer(
      200,
      listOf([...state.posts.values()].filter((p) => p.id === root || p.root_id === root)),
    );
  }
  return error(404, "api.context.404.app_error", `no fake for ${method} ${path}`);
}

/** A post list as Mattermost answers one: ids in order and the posts by id. */
function listOf(list: FakeMattermostPost[]) {
  return {
    order: list.map((p) => p.id),
    posts: Object.fromEntries(list.map((p) => [p.id, p])),
    next_post_id: "",
    prev_post_id: "",
  };
}
