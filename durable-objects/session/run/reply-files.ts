import { adapterFor, HTTP_CHANNELS } from "../../../functions/channels/registry.ts";
import { channelAccount } from "../../../functions/channels/channel-account.ts";
import { readFile, WorkspaceError } from "../../../functions/agent/workspace.ts";
import { mediaKey, mediaStoreFor } from "../../../functions/media/store.ts";
import {
  fileNameOf,
  fileNotSentLine,
  MAX_FILES_PER_REPLY,
  outboundMimeType,
  takeMediaLines,
  type OutboundFileRef,
} from "../../../functions/media/outbound.ts";
import { spokenPart } from "../../../functions/agent/tts.ts";
import { answersVoiceNote, stageVoiceReply } from "./reply-voice.ts";
import { WEB_CHAT_CHANNEL, WEB_FILE_MAX_BYTES } from "./web-files.ts";
import type { RunRow } from "../storage.ts";
import type { SessionState } from "../state.ts";

/**
 * The files a run's final reply names on `MEDIA:` lines (OpenClaw's reply-with-file convention),
 * staged before the reply is recorded: each workspace file's bytes go to the media store under a
 * key made of the run id and the file's place in the reply, so staging again (a run resumed after
 * a crash) writes the same key once. What cannot be sent is said in one line in the reply instead
 * — a channel that takes no files, a file that is not in the workspace or is too large — so a
 * file is never dropped in silence. The outbox then sends each file after the reply's text, and
 * the voice reply (`tts.auto`, reply-voice.ts) last.
 */
export async function stageReplyFiles(
  s: SessionState,
  run: RunRow,
  reply: string,
): Promise<{ text: string; files: OutboundFileRef[] }> {
  // The voice reply (tts.auto) speaks the reply without its MEDIA: lines and tts tags.
  const spoken = spokenPart(s.config, reply, answersVoiceNote(s, run));
  const taken = takeMediaLines(spoken.text);
  const voice = async () => {
    const said = spoken.speak ? takeMediaLines(spoken.speak).text : undefined;
    const file = said ? await stageVoiceReply(s, run, said) : undefined;
    return file ? [file] : [];
  };
  if (!taken.paths.length) return { text: spoken.text, files: await voice() };
  const notes: string[] = [];
  const files: OutboundFileRef[] = [];
  const channel = run.route.channel;
  // The web chat shows its files from signed links (web-files.ts); the OpenAI API has no way to.
  const webChat = channel === WEB_CHAT_CHANNEL;
  const adapter = HTTP_CHANNELS.has(channel) ? undefined : adapterFor(channel);
  const account = channelAccount(s.config, channel, run.route.accountId);
  const media = mediaStoreFor(s.env as unknown as Record<string, unknown>);
  const agentId = s.store.meta.get("agentId") ?? "main";
  const sessionKey = s.store.meta.get("sessionKey") ?? "";
  for (const [index, path] of taken.paths.entries()) {
    const name = fileNameOf(path);
    if (index >= MAX_FILES_PER_REPLY) {
      notes.push(fileNotSentLine(name, `a reply sends at most ${MAX_FILES_PER_REPLY} files`));
      continue;
    }
    if (!adapter?.sendFile && !webChat) {
      notes.push(fileNotSentLine(name, `this channel (${channel}) cannot send files`));
      continue;
    }
    if (!media) {
      notes.push(fileNotSentLine(name, "no media store is bound (MEDIA or MEDIA_DISK)"));
      continue;
    }
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(path)) {
      notes.push(fileNotSentLine(name, "only workspace files are sent, never a URL"));
      continue;
    }
    const found = await readWorkspaceFile(s, agentId, path);
    if ("missing" in found) {
      notes.push(fileNotSentLine(name, found.missing));
      continue;
    }
    const bytes = new TextEncoder().encode(found.content);
    const limit = adapter ? adapter.maxFileBytes?.(account) : WEB_FILE_MAX_BYTES;
    if (limit !== undefined && bytes.byteLength > limit) {
      notes.push(
        fileNotSentLine(name, `${bytes.byteLength} bytes is over this channel's ${limit}`),
      );
      continue;
    }
    const mimeType = outboundMimeType(name, bytes);
    const refusal = adapter?.fileRefusal?.(
      { name, mimeType, sizeBytes: bytes.byteLength },
      { env: s.env as unknown as Record<string, unknown>, config: s.config, account },
    );
    if (refusal) {
      notes.push(fileNotSentLine(name, refusal));
      continue;
    }
    const ref = await mediaKey(agentId, sessionKey, `reply:${run.runId}`, index);
    await media.put(ref, bytes, mimeType);
    files.push({ ref, name, mimeType, sizeBytes: bytes.byteLength });
  }
  const text = [taken.text, ...notes].filter(Boolean).join("\n\n");
  return { text, files: [...files, ...(await voice())] };
}

async function readWorkspaceFile(
  s: SessionState,
  agentId: string,
  path: string,
): Promise<{ content: string } | { missing: string }> {
  try {
    const file = await readFile(s.env, agentId, path.replace(/^\.?\/+/, ""));
    return file ? { content: file.content } : { missing: "no such file in the workspace" };
  } catch (error) {
    if (error instanceof WorkspaceError) return { missing: error.message };
    throw error;
  }
}
