import type { MessageRequest } from "../../../functions/agent/tools/session-tools-host.ts";
import {
  parseMessageTarget,
  targetMatches,
} from "../../../functions/agent/tools/message-targets.ts";
import { adapterFor } from "../../../functions/channels/registry.ts";
import { searchSessions } from "../../../functions/control/session-search.ts";
import { withDb } from "../../../functions/db/client.ts";
import { readFile, WorkspaceError } from "../../../functions/agent/workspace.ts";
import { mediaKey, mediaStoreFor } from "../../../functions/media/store.ts";
import {
  fileNameOf,
  outboundMimeType,
  type OutboundFileRef,
} from "../../../functions/media/outbound.ts";
import type { SessionState } from "../state.ts";
import type { Spawner } from "./spawn.ts";

/**
 * The `message` tool's caller side, before anything is sent: which conversation a send names and
 * the files it carries. A conversation is a session of this agent: given by its key, or found
 * from `channel` + a raw target (message-targets.ts) in the sessions index — the session whose
 * last route is that chat on that channel (and account, when named). A chat this agent was never
 * reached from has no session and no route, and is refused: the agent writes only where it
 * already talks.
 */
export type ResolvedTarget = { sessionKey: string; channel?: string } | { error: string };

export async function resolveMessageTarget(
  s: SessionState,
  request: MessageRequest,
): Promise<ResolvedTarget> {
  if (request.sessionKey) return { sessionKey: request.sessionKey };
  let channel = request.channel;
  let raw = request.target ?? "";
  const prefixed = /^([a-z][a-z0-9_-]*):(.+)$/.exec(raw);
  if (!channel && prefixed && adapterFor(prefixed[1]!)) {
    channel = prefixed[1]!;
    raw = prefixed[2]!;
  }
  if (!channel) return { error: `message: name the channel of target "${raw}"` };
  if (!adapterFor(channel)) return { error: `message: "${channel}" is not a chat channel here` };
  const target = parseMessageTarget(channel, raw);
  if ("error" in target) return { error: `message: ${target.error}` };
  const agentId = s.store.meta.get("agentId") ?? "main";
  const rows = await withDb(s.env, (db) =>
    searchSessions(db, { query: target.id, agentId, limit: 50 }),
  );
  const found = rows.find((row) => {
    const route = row.lastRoute as {
      channel?: string;
      accountId?: string;
      to?: string;
      extra?: Record<string, string>;
    } | null;
    if (!route || route.channel !== channel) return false;
    if (request.accountId && (route.accountId ?? "default") !== request.accountId) return false;
    return targetMatches(target, {
      chatType: row.chatType,
      ...(route.to ? { to: route.to } : {}),
      ...(route.extra?.senderId ? { senderId: route.extra.senderId } : {}),
    });
  });
  if (!found)
    return {
      error: `message: no conversation of this agent on ${channel} is ${raw} (the agent writes only into chats it was reached from)`,
    };
  return { sessionKey: found.sessionKey, channel };
}

/**
 * The files of a send, staged before it is handed to the target: each workspace file's bytes go
 * to the media store under a key made of the sending run, the tool call and the file's place, so
 * a resumed run stages the same key again (one object) and hands the same references over.
 */
export async function stageMessageFiles(
  s: SessionState,
  caller: Spawner,
  paths: string[],
  toolCallId: string,
): Promise<OutboundFileRef[] | { error: string }> {
  if (!paths.length) return [];
  const media = mediaStoreFor(s.env as unknown as Record<string, unknown>);
  if (!media) return { error: "message: no media store is bound (MEDIA or MEDIA_DISK)" };
  const agentId = s.store.meta.get("agentId") ?? "main";
  const ownKey = s.store.meta.get("sessionKey") ?? "";
  const files: OutboundFileRef[] = [];
  for (const [index, path] of paths.entries()) {
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(path))
      return { error: `message: only workspace files are sent, never a URL (${path})` };
    let content: string | undefined;
    try {
      content = (await readFile(s.env, agentId, path.replace(/^\.?\/+/, "")))?.content;
    } catch (error) {
      if (error instanceof WorkspaceError) return { error: `message: ${path}: ${error.message}` };
      throw error;
    }
    if (content === undefined) return { error: `message: ${path}: no such file in the workspace` };
    const bytes = new TextEncoder().encode(content);
    const name = fileNameOf(path);
    const ref = await mediaKey(agentId, ownKey, `message:${caller.runId}:${toolCallId}`, index);
    const mimeType = outboundMimeType(name, bytes);
    await media.put(ref, bytes, mimeType);
    files.push({ ref, name, mimeType, sizeBytes: bytes.byteLength });
  }
  return files;
}
