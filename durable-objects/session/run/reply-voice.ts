import { adapterFor, HTTP_CHANNELS } from "../../../functions/channels/registry.ts";
import { channelAccount } from "../../../functions/channels/channel-account.ts";
import { synthesizeSpeech } from "../../../functions/agent/tts.ts";
import { mediaKey, mediaStoreFor } from "../../../functions/media/store.ts";
import type { OutboundFileRef } from "../../../functions/media/outbound.ts";
import { sessionLog } from "../log.ts";
import { WEB_CHAT_CHANNEL } from "./web-files.ts";
import type { RunRow } from "../storage.ts";
import type { SessionState } from "../state.ts";
import { sessionMeter } from "../upkeep/metering.ts";

/**
 * A reply's voice (`tts.auto`): the spoken part synthesized once and staged in the media store
 * under a key of the run, like a `MEDIA:` file, so a resumed run stages it once; the outbox then
 * sends it after the text. A channel that wants voice notes (`ChannelAdapter.voiceNotes`:
 * Telegram's sendVoice, Feishu's audio message) gets Ogg/Opus marked `voice`; others an audio file.
 * The text always goes: a synthesis that fails (or a budget that stops it) leaves the reply as text
 * and a log line, as OpenClaw falls back to the visible text.
 */
export async function stageVoiceReply(
  s: SessionState,
  run: RunRow,
  speak: string,
): Promise<OutboundFileRef | undefined> {
  const channel = run.route.channel;
  const adapter = HTTP_CHANNELS.has(channel) ? undefined : adapterFor(channel);
  const media = mediaStoreFor(s.env as unknown as Record<string, unknown>);
  // The web chat plays it from a signed link (web-files.ts).
  if ((!adapter?.sendFile && channel !== WEB_CHAT_CHANNEL) || !media) return undefined;
  const voiceNote = adapter?.voiceNotes === true;
  // A platform that takes files only as links (LINE, Twilio) needs a public URL: no synthesis without.
  const refusal = adapter?.fileRefusal?.(
    { name: "reply.mp3", mimeType: "audio/mpeg", sizeBytes: 0 },
    {
      env: s.env as unknown as Record<string, unknown>,
      config: s.config,
      account: channelAccount(s.config, channel, run.route.accountId),
    },
  );
  if (refusal) {
    sessionLog(s, { runId: run.runId }).warn("voice reply not made; the reply goes as text", {
      reason: refusal,
    });
    return undefined;
  }
  const envelope = s.store.inbox.byRun(run.runId)[0]?.event.envelope;
  const spoken = await synthesizeSpeech({
    config: s.config,
    env: s.env,
    text: speak,
    voiceNote,
    meter: sessionMeter(s, {
      kind: "tts",
      runId: run.runId,
      sessionId: run.sessionId,
      channel: envelope?.channel ?? channel,
      ...(envelope?.senderId ? { senderId: envelope.senderId } : {}),
    }),
  });
  if ("error" in spoken) {
    sessionLog(s, { runId: run.runId }).warn("voice reply not made; the reply goes as text", {
      reason: spoken.error,
    });
    return undefined;
  }
  const ref = await mediaKey(
    s.store.meta.get("agentId") ?? "main",
    s.store.meta.get("sessionKey") ?? "",
    `reply-voice:${run.runId}`,
    0,
  );
  await media.put(ref, spoken.bytes, spoken.mimeType);
  const extension = spoken.mimeType === "audio/ogg" ? "ogg" : spoken.mimeType.split("/")[1];
  return {
    ref,
    name: `reply.${extension}`,
    mimeType: spoken.mimeType,
    sizeBytes: spoken.bytes.byteLength,
    ...(voiceNote && spoken.mimeType === "audio/ogg" ? { voice: true } : {}),
  };
}

/** The run answers a voice note (an audio attachment): what `tts.auto: "inbound"` speaks after. */
export function answersVoiceNote(s: SessionState, run: RunRow): boolean {
  return s.store.inbox
    .byRun(run.runId)
    .some((row) =>
      (row.event.envelope.attachments ?? []).some((a) => (a.mimeType ?? "").startsWith("audio/")),
    );
}
