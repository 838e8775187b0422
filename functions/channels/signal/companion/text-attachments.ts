import type { SignalRpc } from "./rpc.ts";

/**
 * The text of an envelope's small text attachments (text/*, JSON, XML, YAML, CSV), read with
 * signal-cli's `getAttachment {id, recipient | groupId}` (base64 of the file signal-cli downloaded
 * while receiving), so the model can read them: the companion's media path for Signal, whose
 * attachment bytes exist only inside signal-cli. Bounded by `mediaMaxMb` and by TEXT_MAX_BYTES per
 * file; other types (images, audio, video) reach the agent as a name, type and size only. An
 * attachment that cannot be read is left out (the envelope still goes on).
 */
const TEXT_MAX_BYTES = 64 * 1024;
const TEXT_TYPES = /^(text\/|application\/(json|xml|x-yaml|yaml|csv)\b)/i;

interface Attachment {
  id?: unknown;
  contentType?: unknown;
  size?: unknown;
}

export async function attachmentTexts(
  rpc: SignalRpc,
  envelope: Record<string, unknown>,
  options: {
    accountParam: Record<string, unknown>;
    ignore: boolean;
    maxBytes: number;
    signal: AbortSignal;
  },
): Promise<Record<string, string>> {
  const data = envelope.dataMessage as
    | { attachments?: Attachment[]; groupInfo?: { groupId?: unknown } }
    | undefined;
  const texts: Record<string, string> = {};
  if (options.ignore || !Array.isArray(data?.attachments)) return texts;
  const limit = Math.min(options.maxBytes, TEXT_MAX_BYTES);
  const groupId = typeof data.groupInfo?.groupId === "string" ? data.groupInfo.groupId : undefined;
  const source = envelope.sourceNumber ?? envelope.sourceUuid;
  for (const attachment of data.attachments) {
    if (typeof attachment.id !== "string" || typeof attachment.contentType !== "string") continue;
    if (!TEXT_TYPES.test(attachment.contentType)) continue;
    if (typeof attachment.size === "number" && attachment.size > limit) continue;
    try {
      const answer = await rpc.call<{ data?: unknown }>(
        "getAttachment",
        {
          ...options.accountParam,
          id: attachment.id,
          ...(groupId ? { groupId } : { recipient: source }),
        },
        { signal: options.signal, timeoutMs: 15_000 },
      );
      if (typeof answer?.data !== "string") continue;
      const bytes = Buffer.from(answer.data, "base64");
      if (bytes.length > limit) continue;
      texts[attachment.id] = bytes.toString("utf8");
    } catch {
      // Unreadable (gone from signal-cli's store, daemon busy): the name and type still go.
    }
  }
  return texts;
}
