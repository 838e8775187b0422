/**
 * Server-sent events over a web-standard ReadableStream. The producer writes events as they come;
 * if the client goes away, writes become no-ops and `closed` tells the producer to stop.
 */

export interface SseWriter {
  /** A `data:` line with a JSON payload (or a raw string such as `[DONE]`), optionally named. */
  send(data: unknown, event?: string): void;
  /** A comment line, ignored by clients; keeps idle connections from being cut by proxies. */
  comment(text: string): void;
  close(): void;
  readonly closed: boolean;
}

export const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache, no-transform",
  "x-accel-buffering": "no",
} as const;

/**
 * Starts `produce` and returns the stream it writes to. Errors thrown by `produce` are handed to
 * `onError`, which may still send a last event before the stream closes.
 */
export function sseStream(
  produce: (writer: SseWriter) => Promise<void>,
  onError: (error: unknown, writer: SseWriter) => void,
  onCancel?: () => void,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let closed = false;
  const enqueue = (text: string) => {
    if (closed) return;
    try {
      controller.enqueue(encoder.encode(text));
    } catch {
      closed = true;
    }
  };
  const writer: SseWriter = {
    send(data, event) {
      const payload = typeof data === "string" ? data : JSON.stringify(data);
      const lines = payload
        .split("\n")
        .map((line) => `data: ${line}`)
        .join("\n");
      enqueue(`${event ? `event: ${event}\n` : ""}${lines}\n\n`);
    },
    comment(text) {
      enqueue(`: ${text.replace(/\n/g, " ")}\n\n`);
    },
    close() {
      if (closed) return;
      closed = true;
      try {
        controller.close();
      } catch {
        // already closed by a cancelled reader
      }
    },
    get closed() {
      return closed;
    },
  };
  return new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
      void produce(writer)
        .catch((error: unknown) => onError(error, writer))
        .finally(() => writer.close());
    },
    cancel() {
      closed = true;
      onCancel?.();
    },
  });
}
