import type { RunEvent } from "../session-api.ts";

/**
 * The NDJSON stream an HTTP caller reads RunEvents from (SessionDO.chat, .respond): one event per
 * line; a terminal `done` or `error` closes it, and anything written after is dropped.
 */
export function runEventStream(): {
  readable: ReadableStream<Uint8Array>;
  write: (event: RunEvent) => void;
} {
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  const writer = writable.getWriter();
  const encoder = new TextEncoder();
  let closed = false;
  const write = (event: RunEvent) => {
    if (closed) return;
    void writer.write(encoder.encode(`${JSON.stringify(event)}\n`)).catch(() => undefined);
    if (event.type === "done" || event.type === "error") {
      closed = true;
      void writer.close().catch(() => undefined);
    }
  };
  return { readable, write };
}
