import { MAX_ATTACHMENT_CHARS } from "../../../functions/channels/attachments.ts";
import { intakeConfig } from "../../../functions/media/ingest.ts";
import { readDocument } from "../../../functions/agent/read-document.ts";
import { mediaKey, mediaStoreFor } from "../../../functions/media/store.ts";
import type { MediaPart } from "../../../functions/media/parts.ts";
import { transcribeAudio } from "../../../functions/agent/transcribe.ts";
import type { InboxRow } from "../storage.ts";
import type { TriageHost } from "./triage-host.ts";

/**
 * Where this event's images, audio and documents go: the media store, after access control (this
 * runs only for an allowed message), under keys of this agent, session and event.
 */
export function mediaIntake(host: TriageHost, row: InboxRow, agentId: string, sessionKey: string) {
  const eventKey = row.event.envelope.dedupKey;
  const store = mediaStoreFor(host.env as Record<string, unknown>);
  if (!store) return undefined;
  return {
    store,
    config: intakeConfig(host.config.tools.media, host.config.agents.defaults.pdfMaxMb),
    keyFor: (index: number) => mediaKey(agentId, sessionKey, eventKey, index),
    transcribe: async (bytes: Uint8Array, part: MediaPart) =>
      transcribeAudio({
        bytes,
        mimeType: part.mimeType,
        config: host.config,
        env: host.env,
        meter: host.meterFor(row, "transcription"),
      }),
    readDocument: async (bytes: Uint8Array, part: MediaPart) =>
      readDocument({
        bytes,
        name: part.name ?? "document.pdf",
        env: host.env as Record<string, unknown>,
        maxChars: MAX_ATTACHMENT_CHARS,
        timeoutMs: DOCUMENT_READ_TIMEOUT_MS,
      }),
  };
}

/** One PDF's conversion; past it the PDF is kept without text (a native reader still gets it). */
const DOCUMENT_READ_TIMEOUT_MS = 60_000;
