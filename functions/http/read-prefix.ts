/**
 * Reads at most the first `keepBytes` of a download, streaming, and stops there: a file larger than
 * what anyone will look at is never held in memory whole. `maxBytes` is the size the caller refuses
 * outright; it is checked against a declared Content-Length before any byte is read, and while
 * streaming when it is the tighter of the two bounds (a sender may omit or understate its length).
 */
export type PrefixResult =
  | { ok: true; bytes: Uint8Array; truncated: boolean }
  | { ok: false; reason: "too-large"; declared?: number };

export async function readBodyPrefix(
  response: Pick<Response, "headers" | "body">,
  limits: { maxBytes: number; keepBytes: number },
): Promise<PrefixResult> {
  const declared = Number(response.headers.get("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > limits.maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    return { ok: false, reason: "too-large", declared };
  }
  if (!response.body) return { ok: true, bytes: new Uint8Array(0), truncated: false };
  const keep = Math.min(limits.keepBytes, limits.maxBytes);
  const bytes = new Uint8Array(keep);
  let filled = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { ok: true, bytes: bytes.subarray(0, filled), truncated: false };
    const room = keep - filled;
    if (value.byteLength > room) {
      bytes.set(value.subarray(0, room), filled);
      await reader.cancel().catch(() => undefined);
      // Past the refusal bound itself: the sender understated (or omitted) its size.
      if (keep === limits.maxBytes) return { ok: false, reason: "too-large" };
      return { ok: true, bytes, truncated: true };
    }
    bytes.set(value, filled);
    filled += value.byteLength;
  }
}
