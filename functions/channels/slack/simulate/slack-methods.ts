import { DEFAULT_IDENTITY, type StoredMessage } from "./slack-records.ts";
import { readConversation } from "./slack-history.ts";
import type { SlackFakeState } from "./slack-state.ts";
import { jsonOrText } from "../../../../scripts/simulate/fakes/form-args.ts";

/**
 * The Web API methods the fake Slack answers, applied to its state once the token and any scripted
 * failure have been checked: auth.test, chat.* (post, stream, update, delete), conversations.*,
 * the external file upload, reactions and the assistant status. Unknown methods → unknown_method.
 */
export function applyMethod(
  state: SlackFakeState,
  method: string,
  args: Record<string, unknown>,
  token: string,
  origin: string,
): Record<string, unknown> {
  const identity = state.identities.get(token) ?? DEFAULT_IDENTITY;
  const str = (key: string) => (typeof args[key] === "string" ? (args[key] as string) : undefined);
  switch (method) {
    case "auth.test":
      return {
        ok: true,
        url: "https://fake.slack.test/",
        team: "Fake",
        user: "edgeclaw",
        ...identity,
      };
    case "chat.postMessage":
    case "chat.startStream": {
      const channel = str("channel");
      if (!channel) return { ok: false, error: "channel_not_found" };
      if (method === "chat.startStream" && !str("thread_ts"))
        return { ok: false, error: "invalid_arguments" };
      const text = str("text") ?? str("markdown_text") ?? "";
      if (method === "chat.postMessage" && !text && !args.blocks)
        return { ok: false, error: "no_text" };
      const message: StoredMessage = {
        channel,
        ts: state.nextTs(),
        text,
        thread_ts: str("thread_ts"),
        user: identity.user_id,
        bot_id: identity.bot_id,
        metadata: args.metadata,
        streaming: method === "chat.startStream",
      };
      state.messages.push(message);
      return {
        ok: true,
        channel,
        ts: message.ts,
        message: {
          type: "message",
          text,
          user: message.user,
          bot_id: message.bot_id,
          ts: message.ts,
        },
      };
    }
    case "chat.appendStream":
    case "chat.stopStream":
    case "chat.update":
    case "chat.delete": {
      const found = state.messages.find(
        (m) => m.channel === str("channel") && m.ts === str("ts") && !m.deleted,
      );
      if (!found) return { ok: false, error: "message_not_found" };
      if (method === "chat.appendStream") {
        if (!found.streaming) return { ok: false, error: "message_not_in_streaming_state" };
        found.text += str("markdown_text") ?? "";
      } else if (method === "chat.stopStream") {
        if (!found.streaming) return { ok: false, error: "message_not_in_streaming_state" };
        found.text += str("markdown_text") ?? "";
        found.streaming = false;
      } else if (method === "chat.update") {
        found.text = str("text") ?? str("markdown_text") ?? found.text;
      } else {
        found.deleted = true;
      }
      return { ok: true, channel: found.channel, ts: found.ts };
    }
    case "conversations.history":
    case "conversations.replies":
      return readConversation(state, method, args);
    case "files.getUploadURLExternal": {
      const filename = str("filename");
      const length = Number(args.length);
      if (!filename || !Number.isSafeInteger(length) || length <= 0)
        return { ok: false, error: "invalid_arguments" };
      const fileId = `F${String(++state.fileSeq).padStart(8, "0")}`;
      state.uploads.set(fileId, { filename, length });
      return { ok: true, upload_url: `${origin}/upload/v1/${fileId}`, file_id: fileId };
    }
    case "files.completeUploadExternal": {
      const list = (typeof args.files === "string" ? jsonOrText(args.files) : args.files) as
        | Array<{ id?: string; title?: string }>
        | undefined;
      if (!Array.isArray(list) || !list.length) return { ok: false, error: "invalid_arguments" };
      const shared: NonNullable<StoredMessage["files"]> = [];
      for (const entry of list) {
        const pending = entry.id ? state.uploads.get(entry.id) : undefined;
        // Slack refuses to complete a file whose bytes never reached the upload URL, or twice.
        if (!pending?.sha256 || pending.completed) return { ok: false, error: "file_not_found" };
        pending.completed = true;
        shared.push({
          id: entry.id!,
          name: pending.filename,
          title: entry.title ?? pending.filename,
          size: pending.length,
          sha256: pending.sha256,
        });
      }
      const channel = str("channel_id");
      if (channel) {
        state.messages.push({
          channel,
          ts: state.nextTs(),
          text: str("initial_comment") ?? "",
          thread_ts: str("thread_ts"),
          user: identity.user_id,
          bot_id: identity.bot_id,
          blocks: str("initial_comment") ? undefined : args.blocks,
          files: shared,
        });
      }
      return { ok: true, files: shared.map((f) => ({ id: f.id, title: f.title })) };
    }
    case "reactions.add":
    case "reactions.remove":
    case "assistant.threads.setStatus":
      return { ok: true };
    default:
      return { ok: false, error: "unknown_method" };
  }
}
