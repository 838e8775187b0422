import type { WebSocket } from "ws";

/** What the fake Mattermost keeps: posts, uploaded files, slash commands, scripted failures. */

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

export interface Script {
  method: string;
  path: string;
  times: number;
  status?: number;
  dropConnection?: boolean;
}

/** A WebSocket client: its next event seq and whether it has authenticated. */
export interface SocketClient {
  ws: WebSocket;
  seq: number;
  authed: boolean;
}

/** Every channel of the fake is in team "team1"; DMs and group messages belong to no team, as in Mattermost. */
export function teamOf(channelType: string): string {
  return channelType === "D" || channelType === "G" ? "" : "team1";
}
