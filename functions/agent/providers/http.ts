import { ModelError } from "../types.ts";
import {
  classifyHttpError,
  parseErrorBody,
  redactSecrets,
  retryAfterMsFromHeaders,
} from "./errors.ts";
import { diagnoseUnreachable, isEdgeDnsError, unreachableError } from "./unreachable.ts";

/**
 * One streaming POST to a model provider, guarded by an idle watchdog: the first byte and every
 * later chunk must arrive within `idleTimeoutMs`, or the request is aborted and reported as a
 * `timeout`. A caller abort is `aborted`, a transport failure `network` naming its cause (DNS,
 * refused, TLS: unreachable.ts), a non-2xx status is classified by errors.ts. The body is consumed either as SSE events or, when a proxy ignores
 * `stream: true`, as one JSON document.
 */

export interface SseEvent {
  event?: string;
  data: string;
}

export type ProviderBody =
  | { kind: "sse"; events: AsyncIterable<SseEvent> }
  | { kind: "json"; json: unknown };

export interface ProviderPost {
  url: string;
  headers: Record<string, string>;
  body: unknown;
  idleTimeoutMs: number;
  signal?: AbortSignal;
  /** Values that must never appear in an error message (the API key). */
  secrets: Array<string | undefined>;
  /** The config key of the base URL, named when the provider cannot be reached. */
  baseUrlKey?: string;
}

export async function postToProvider(post: ProviderPost): Promise<ProviderBody> {
  const guard = new RequestGuard(post.idleTimeoutMs, post.signal);
  let response: Response;
  try {
    response = await fetch(post.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "text/event-stream, application/json",
        ...post.headers,
      },
      body: JSON.stringify(post.body),
      signal: guard.signal,
    });
  } catch (error) {
    guard.stop();
    const translated = guard.translate(error, post.secrets);
    if (translated.kind !== "network") throw translated;
    throw unreachableError(post, await diagnoseUnreachable(post, error), error);
  }
  try {
    if (!response.ok) {
      const retryAfterMs = retryAfterMsFromHeaders(response.headers);
      const text = await readAllText(response, guard);
      guard.stop();
      if (isEdgeDnsError(response.status, text)) throw unreachableError(post, "dns");
      const detail = parseErrorBody(text);
      detail.message = redactSecrets(detail.message, post.secrets);
      throw classifyHttpError(response.status, detail, retryAfterMs);
    }
    const contentType = response.headers.get("content-type") ?? "";
    if (!contentType.includes("text/event-stream")) {
      const text = await readAllText(response, guard);
      guard.stop();
      try {
        return { kind: "json", json: JSON.parse(text) as unknown };
      } catch {
        throw new ModelError(
          "server",
          `provider answered ${contentType || "without a content type"} that is not JSON`,
          response.status,
        );
      }
    }
    return { kind: "sse", events: sseEvents(response, guard, post.secrets) };
  } catch (error) {
    guard.stop();
    throw guard.translate(error, post.secrets);
  }
}

class RequestGuard {
  private readonly controller = new AbortController();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private timedOut = false;
  private readonly onCallerAbort = () =>
    this.controller.abort(new ModelError("aborted", "the model call was aborted"));

  constructor(
    private readonly idleTimeoutMs: number,
    private readonly callerSignal: AbortSignal | undefined,
  ) {
    if (callerSignal?.aborted) this.onCallerAbort();
    callerSignal?.addEventListener("abort", this.onCallerAbort, { once: true });
    this.kick();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Called whenever bytes arrive: the stream is alive, restart the idle clock. */
  kick(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.controller.abort(
        new ModelError("timeout", `no data from the model provider for ${this.idleTimeoutMs} ms`),
      );
    }, this.idleTimeoutMs);
  }

  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.callerSignal?.removeEventListener("abort", this.onCallerAbort);
  }

  /** Waits for `promise` unless the request is aborted first (a body read may not notice an abort). */
  race<T>(promise: Promise<T>): Promise<T> {
    if (this.controller.signal.aborted) return Promise.reject(this.controller.signal.reason);
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => reject(this.controller.signal.reason);
      this.controller.signal.addEventListener("abort", onAbort, { once: true });
      promise.then(
        (value) => {
          this.controller.signal.removeEventListener("abort", onAbort);
          resolve(value);
        },
        (error: unknown) => {
          this.controller.signal.removeEventListener("abort", onAbort);
          reject(error);
        },
      );
    });
  }

  translate(error: unknown, secrets: Array<string | undefined>): ModelError {
    if (error instanceof ModelError) return error;
    if (this.timedOut)
      return new ModelError(
        "timeout",
        `no data from the model provider for ${this.idleTimeoutMs} ms`,
      );
    if (this.callerSignal?.aborted) return new ModelError("aborted", "the model call was aborted");
    const message = error instanceof Error ? error.message : String(error);
    return new ModelError(
      "network",
      `could not reach the model provider: ${redactSecrets(message, secrets)}`,
    );
  }
}

async function readAllText(response: Response, guard: RequestGuard): Promise<string> {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  try {
    for (;;) {
      const { done, value } = await guard.race(reader.read());
      if (done) break;
      guard.kick();
      text += decoder.decode(value, { stream: true });
      // An error page has no business being large; keep memory bounded.
      if (text.length > 1_000_000) break;
    }
  } finally {
    reader.cancel().catch(() => undefined);
  }
  return text + decoder.decode();
}

async function* sseEvents(
  response: Response,
  guard: RequestGuard,
  secrets: Array<string | undefined>,
): AsyncGenerator<SseEvent> {
  const body = response.body;
  if (!body) {
    guard.stop();
    return;
  }
  const reader = body.getReader();
  const parser = new SseParser();
  const decoder = new TextDecoder();
  try {
    for (;;) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await guard.race(reader.read());
      } catch (error) {
        throw guard.translate(error, secrets);
      }
      if (chunk.done) break;
      guard.kick();
      for (const event of parser.push(decoder.decode(chunk.value, { stream: true }))) yield event;
    }
    for (const event of parser.push(`${decoder.decode()}\n\n`)) yield event;
  } finally {
    guard.stop();
    reader.cancel().catch(() => undefined);
  }
}

/** Incremental text/event-stream parser (WHATWG rules: `event:`/`data:` fields, blank line dispatches). */
export class SseParser {
  private buffer = "";
  private event: string | undefined;
  private data: string[] = [];

  push(text: string): SseEvent[] {
    this.buffer += text;
    const out: SseEvent[] = [];
    for (;;) {
      const match = /\r\n|\r|\n/.exec(this.buffer);
      if (!match) break;
      // A lone "\r" at the end may be the first half of "\r\n": wait for more text.
      if (match[0] === "\r" && match.index === this.buffer.length - 1) break;
      const line = this.buffer.slice(0, match.index);
      this.buffer = this.buffer.slice(match.index + match[0].length);
      if (line === "") {
        if (this.data.length) out.push({ event: this.event, data: this.data.join("\n") });
        this.event = undefined;
        this.data = [];
        continue;
      }
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? "" : line.slice(colon + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "event") this.event = value;
      else if (field === "data") this.data.push(value);
    }
    return out;
  }
}

/** JSON.parse that answers undefined instead of throwing (stream events providers may extend). */
export function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
