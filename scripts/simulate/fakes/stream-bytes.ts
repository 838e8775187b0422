import type { ServerResponse } from "node:http";

/** A large download a fake serves without holding it: `bytes` bytes of `content` repeated. */
export interface StreamedBody {
  content: string;
  contentType: string;
  bytes: number;
  /** The Content-Length header to send (may lie, to test a client); none (chunked) when unset. */
  contentLength?: number;
}

/**
 * Writes `body.bytes` bytes in 64 KiB pieces, each only when the client has read the one before
 * (backpressure), and stops when the client goes away. `onSent` hears the running total after each
 * piece, so a test can tell a client that stopped reading from one that read it all.
 */
export async function streamBytes(
  res: ServerResponse,
  body: StreamedBody,
  onSent?: (sent: number) => void,
): Promise<void> {
  res.writeHead(200, {
    "content-type": body.contentType,
    connection: "close",
    ...(body.contentLength !== undefined ? { "content-length": String(body.contentLength) } : {}),
  });
  const chunk = Buffer.alloc(64 * 1024, body.content || "x");
  let sent = 0;
  let closed = false;
  res.on("close", () => (closed = true));
  while (sent < body.bytes && !closed) {
    const piece = chunk.subarray(0, Math.min(chunk.length, body.bytes - sent));
    sent += piece.length;
    onSent?.(sent);
    if (!res.write(piece))
      await new Promise((resolve) => res.once("drain", resolve).once("close", resolve));
  }
  if (!closed) res.end();
}
