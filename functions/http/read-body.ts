/**
 * Reads a request (or response) body under a byte cap, once, as raw bytes (signatures are computed over exactly
 * these bytes). The cap is checked against Content-Length first and then while streaming, so an
 * oversized body is refused with 413 before it is parsed or verified, and a client that lies about
 * its length cannot push more than the cap into memory.
 */
export type BodyResult =
  | { ok: true; bytes: Uint8Array }
  | { ok: false; status: 413; error: string };

export async function readBodyCapped(
  request: Pick<Request, "headers" | "body">,
  maxBytes: number,
): Promise<BodyResult> {
  const tooLarge: BodyResult = {
    ok: false,
    status: 413,
    error: `request body exceeds ${maxBytes} bytes`,
  };
  const declared = Number(request.headers.get("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > maxBytes) return tooLarge;
  // No body reads as empty bytes: the caller's signature or parse check decides what that means.
  if (!request.body) return { ok: true, bytes: new Uint8Array(0) };
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      return tooLarge;
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { ok: true, bytes };
}
