/**
 * How long an MP3 or M4A file plays, in milliseconds, read from its own structure (no decoder):
 * LINE's audio message requires `duration`. Undefined when the bytes are neither or are cut short,
 * so the caller sends the file as a link instead of guessing.
 */
export function audioDurationMs(bytes: Uint8Array, mimeType: string): number | undefined {
  if (mimeType === "audio/mpeg") return mp3DurationMs(bytes);
  if (mimeType === "audio/mp4" || mimeType === "audio/x-m4a") return mp4DurationMs(bytes);
  return undefined;
}

/** Layer III bit rates (kbit/s) by index: MPEG-1, then MPEG-2/2.5. */
const BITRATES = [
  [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
  [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
];
const SAMPLE_RATES: Record<number, number[]> = {
  3: [44100, 48000, 32000], // MPEG-1
  2: [22050, 24000, 16000], // MPEG-2
  0: [11025, 12000, 8000], // MPEG-2.5
};

/** Walks the frames after any ID3v2 tag and adds up their samples (right for CBR and VBR alike). */
function mp3DurationMs(bytes: Uint8Array): number | undefined {
  let offset = 0;
  if (bytes[0] === 0x49 && bytes[1] === 0x44 && bytes[2] === 0x33 && bytes.length >= 10) {
    const size = (bytes[6]! << 21) | (bytes[7]! << 14) | (bytes[8]! << 7) | bytes[9]!;
    offset = 10 + size;
  }
  let seconds = 0;
  let frames = 0;
  while (offset + 4 <= bytes.length) {
    const b1 = bytes[offset + 1]!;
    const b2 = bytes[offset + 2]!;
    const version = (b1 >> 3) & 0x3;
    const layer = (b1 >> 1) & 0x3;
    const rates = SAMPLE_RATES[version];
    const bitrate = BITRATES[version === 3 ? 0 : 1]![b2 >> 4];
    const sampleRate = rates?.[(b2 >> 2) & 0x3];
    if (bytes[offset] !== 0xff || (b1 & 0xe0) !== 0xe0 || layer !== 1 || !bitrate || !sampleRate) {
      // A trailing ID3v1 tag or padding ends the frames; garbage before any frame is no MP3.
      if (frames === 0) return undefined;
      break;
    }
    const samples = version === 3 ? 1152 : 576;
    const length = Math.floor(((samples / 8) * bitrate * 1000) / sampleRate) + ((b2 >> 1) & 0x1);
    seconds += samples / sampleRate;
    frames += 1;
    offset += length;
  }
  return frames ? Math.round(seconds * 1000) : undefined;
}

/** The movie header's duration (`moov` → `mvhd`: timescale and duration, version 0 or 1). */
function mp4DurationMs(bytes: Uint8Array): number | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const find = (start: number, end: number, type: string): [number, number] | undefined => {
    let at = start;
    while (at + 8 <= end) {
      let size = view.getUint32(at);
      const name = String.fromCharCode(...bytes.subarray(at + 4, at + 8));
      if (size === 1 && at + 16 <= end) size = Number(view.getBigUint64(at + 8));
      if (size === 0) size = end - at;
      if (size < 8 || at + size > end) return undefined;
      if (name === type) return [at + 8, at + size];
      at += size;
    }
    return undefined;
  };
  const moov = find(0, bytes.length, "moov");
  const mvhd = moov && find(moov[0], moov[1], "mvhd");
  if (!mvhd || mvhd[1] - mvhd[0] < 32) return undefined;
  const v1 = bytes[mvhd[0]] === 1;
  const timescale = view.getUint32(mvhd[0] + (v1 ? 20 : 12));
  const duration = v1 ? Number(view.getBigUint64(mvhd[0] + 24)) : view.getUint32(mvhd[0] + 16);
  return timescale ? Math.round((duration / timescale) * 1000) : undefined;
}
