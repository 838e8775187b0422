import type { ServerResponse } from "node:http";
import { json } from "../../../../scripts/simulate/fakes/kit.ts";
import { randomBytes } from "node:crypto";
import type {
  FakeMattermostCommand,
  FakeMattermostFile,
  FakeMattermostPost,
  Script,
  SocketClient,
} from "./mattermost-records.ts";

/**
 * Everything the fake Mattermost holds between requests: the tokens it takes, posts, channel
 * types, recent pending_post_ids, uploaded files, recorded calls, scripted failures, open
 * WebSockets and slash commands. The REST routes, the control endpoints and the socket share one
 * instance.
 */
export class MattermostFakeState {
  readonly tokens: { has(token: string): boolean };
  readonly posts = new Map<string, FakeMattermostPost>();
  /** channel id → type (D/G/O/P) */
  readonly channels = new Map<string, string>();
  /** pending_post_id → the post it created, for the server's 30 s deduplication. */
  readonly pending = new Map<string, { postId: string; at: number }>();
  readonly files = new Map<string, FakeMattermostFile>();
  readonly calls: Array<{ method: string; path: string; body: unknown }> = [];
  scripts: Script[] = [];
  readonly sockets = new Set<SocketClient>();
  readonly commands = new Map<string, FakeMattermostCommand>();
  private clock = Date.now();

  constructor(given: string[] | ((token: string) => boolean)) {
    this.tokens = {
      has: typeof given === "function" ? given : (token: string) => given.includes(token),
    };
  }

  /** A millisecond timestamp, bumped so no two are the same. */
  now(): number {
    this.clock = Math.max(this.clock + 1, Date.now());
    return this.clock;
  }

  newId(): string {
    return randomBytes(13).toString("hex");
  }

  createPost(fields: {
    user_id: string;
    channel_id: string;
    message: string;
    root_id?: string;
    props?: Record<string, unknown>;
    pending_post_id?: string;
  }): FakeMattermostPost {
    const at = this.now();
    const post: FakeMattermostPost = {
      id: this.newId(),
      create_at: at,
      update_at: at,
      edit_at: 0,
      delete_at: 0,
      root_id: "",
      type: "",
      props: {},
      ...fields,
    };
    this.posts.set(post.id, post);
    return post;
  }

  /** A slash command as Mattermost stores it, with a fresh id and token. */
  newCommand(
    fields: Pick<FakeMattermostCommand, "creator_id" | "team_id" | "trigger" | "method" | "url"> &
      Partial<Pick<FakeMattermostCommand, "display_name" | "description" | "auto_complete">> &
      Partial<Pick<FakeMattermostCommand, "auto_complete_desc" | "auto_complete_hint">>,
  ): FakeMattermostCommand {
    const at = this.now();
    const command: FakeMattermostCommand = {
      id: this.newId(),
      token: this.newId(),
      create_at: at,
      update_at: at,
      delete_at: 0,
      creator_id: fields.creator_id,
      team_id: fields.team_id,
      trigger: fields.trigger,
      method: fields.method,
      url: fields.url,
      display_name: fields.display_name ?? "",
      description: fields.description ?? "",
      auto_complete: fields.auto_complete ?? false,
      auto_complete_desc: fields.auto_complete_desc ?? "",
      auto_complete_hint: fields.auto_complete_hint ?? "",
    };
    this.commands.set(command.id, command);
    return command;
  }
}

/** Mattermost's error body `{ id, message, status_code }`. */
export function apiError(res: ServerResponse, status: number, id: string, message: string) {
  json(res, status, { id, message, status_code: status });
}
