import type { MediaConfig } from "../config/media-schema.ts";
import type { MediaPart } from "./parts.ts";
import { declaredMediaKind, sniffMedia, type MediaKind } from "./sniff.ts";
import type { MediaStore } from "./store.ts";

/**
 * One attachment's bytes into the media store, checked: within the kind's `tools.media.<kind>.maxBytes`,
 * recognised by its magic bytes, and of the kind it was declared as. Anything else is refused
 * with a note the model (and through it the sender) reads, and nothing is stored.
 */

export interface MediaCandidate {
  name?: string;
  mimeType?: string;
  sizeBytes?: number;
}

export type IngestResult = { part: MediaPart } | { note: string };

/** The kinds of media the gateway reads (the bytes of any other file are never downloaded whole). */
const HANDLED_KINDS: ReadonlySet<MediaKind> = new Set(["image", "audio", "document"]);

/**
 * `tools.media` plus the document bound, which OpenClaw keeps under `agents.defaults.pdfMaxMb`
 * rather than in `tools.media`: the session adds it (intakeConfig) before attachments are read.
 */
export type IntakeConfig = MediaConfig & {
  document?: { enabled: boolean; maxBytes: number };
};

/** The config attachments are read under: `tools.media` and `agents.defaults.pdfMaxMb`. */
export function intakeConfig(media: MediaConfig, pdfMaxMb: number): IntakeConfig {
  return { ...media, document: { enabled: true, maxBytes: Math.floor(pdfMaxMb * 1024 * 1024) } };
}

/** The handled kind an attachment declares (by type, else file name), whatever the config says. */
export function handledMediaKind(attachment: MediaCandidate): MediaKind | undefined {
  const kind = declaredMediaKind(attachment.mimeType, attachment.name);
  return kind && HANDLED_KINDS.has(kind) ? kind : undefined;
}

/** The kind an attachment will be handled as, when media handling for that kind is on. */
export function mediaKindOf(
  attachment: MediaCandidate,
  config: IntakeConfig,
): MediaKind | undefined {
  const kind = handledMediaKind(attachment);
  if (!kind || !capability(config, kind).enabled) return undefined;
  // Audio is only worth its download when something can transcribe it.
  if (kind === "audio" && !hasAudioModel(config)) return undefined;
  return kind;
}

export function hasAudioModel(config: MediaConfig): boolean {
  return config.models.some(
    (entry) => entry.type === "provider" && entry.capabilities.includes("audio"),
  );
}

export function maxBytesFor(config: IntakeConfig, kind: MediaKind): number {
  return capability(config, kind).maxBytes;
}

export async function ingestMedia(args: {
  attachment: MediaCandidate;
  kind: MediaKind;
  bytes: Uint8Array;
  config: IntakeConfig;
  store: MediaStore;
  key: string;
}): Promise<IngestResult> {
  const { attachment, kind, bytes, config, store, key } = args;
  const maxBytes = maxBytesFor(config, kind);
  if (bytes.byteLength > maxBytes)
    return { note: `${bytes.byteLength} bytes, over ${limitKey(kind)} (${maxBytes} bytes)` };
  if (bytes.byteLength === 0) return { note: "empty file" };
  const sniffed = sniffMedia(bytes);
  if (!sniffed)
    return {
      note: `not a ${kind} format edgeclaw reads (unrecognised or corrupt bytes); not shown`,
    };
  if (sniffed.kind !== kind)
    return {
      note: `declared as ${attachment.mimeType ?? kind} but the bytes are ${sniffed.mime}; not shown`,
    };
  await store.put(key, bytes, sniffed.mime);
  return {
    part: {
      kind,
      ref: key,
      mimeType: sniffed.mime,
      sizeBytes: bytes.byteLength,
      ...(attachment.name ? { name: attachment.name } : {}),
    },
  };
}

function capability(config: IntakeConfig, kind: MediaKind): { enabled: boolean; maxBytes: number } {
  if (kind === "image") return config.image;
  if (kind === "audio") return config.audio;
  return config.document ?? { enabled: false, maxBytes: 0 };
}

/** The config key that bounds a kind's size, as a refusal names it. */
export function limitKey(kind: MediaKind): string {
  return kind === "document" ? "agents.defaults.pdfMaxMb" : `tools.media.${kind}.maxBytes`;
}
