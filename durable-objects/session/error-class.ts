import { ModelError } from "../../functions/agent/types.ts";
import { isRetryable } from "../../functions/agent/model-retry.ts";

/**
 * Every failure of a session step has a class. Transient (network, 429, 5xx, Postgres down or
 * busy) is worth waiting for, with bounded backoff; permanent (a 4xx, invalid data, a bug) fails
 * the same way every time, so the one event is dead-lettered and the session goes on.
 */
export type ErrorClass = "transient" | "permanent";

export interface ClassifiedError {
  class: ErrorClass;
  /** One line for the log, the dead letter and the user (no query parameters, no stack). */
  reason: string;
}

/**
 * SQLSTATE classes that mean "the database is unavailable right now", not "this statement is
 * wrong": connection exceptions (08), insufficient resources (53), operator intervention such as
 * a restart (57P), and serialization failures / deadlocks (40001, 40P01).
 */
const TRANSIENT_SQLSTATE = /^(08|53|57P|40001|40P01)/;

/** Wording of connection-level failures from the Postgres driver, sockets and fetch. */
const TRANSIENT_MESSAGE =
  /connect|connection|socket|network|terminated|timed? ?out|timeout|ECONN|EPIPE|ENOTFOUND|EAI_AGAIN|fetch failed|unavailable|overloaded/i;

/** Errors that are defects in our code or data: retrying runs the same code on the same data. */
const BUG_NAMES = new Set([
  "TypeError",
  "ReferenceError",
  "SyntaxError",
  "RangeError",
  "ZodError",
  "URIError",
]);

export function classifyError(error: unknown): ClassifiedError {
  const reason = describeOneLine(error);
  for (const current of causeChain(error)) {
    if (current instanceof ModelError) {
      if (current.kind === "aborted") return { class: "transient", reason };
      return { class: isRetryable(current.kind) ? "transient" : "permanent", reason };
    }
    const code = sqlState(current);
    if (code) return { class: TRANSIENT_SQLSTATE.test(code) ? "transient" : "permanent", reason };
    const status = httpStatus(current);
    if (status !== undefined)
      return {
        class: status === 408 || status === 429 || status >= 500 ? "transient" : "permanent",
        reason,
      };
  }
  const messages = causeChain(error).map(messageOf);
  if (messages.some((message) => TRANSIENT_MESSAGE.test(message)))
    return { class: "transient", reason };
  if (error instanceof Error && BUG_NAMES.has(error.name)) return { class: "permanent", reason };
  // Unknown: worth a few tries (the bound on attempts still ends it), not an instant dead letter.
  return { class: "transient", reason };
}

/** An error and its causes on one line (drizzle wraps the driver's error as `cause`); first lines only. */
export function describeOneLine(error: unknown): string {
  return causeChain(error)
    .map((current) => messageOf(current).split("\n")[0]!)
    .join(" ← ")
    .slice(0, 500);
}

/** Error, or an error-like event (a WebSocket's ErrorEvent from the Postgres driver): its message. */
function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  const message =
    typeof error === "object" && error !== null
      ? (error as { message?: unknown }).message
      : undefined;
  return typeof message === "string" && message ? message : String(error);
}

function causeChain(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (
    let current: unknown = error, depth = 0;
    current !== undefined && current !== null && depth < 5;
    depth++
  ) {
    chain.push(current);
    current = current instanceof Error ? current.cause : undefined;
  }
  return chain;
}

function sqlState(error: unknown): string | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

function httpStatus(error: unknown): number | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const status = (error as { status?: unknown }).status;
  return typeof status === "number" && status >= 400 && status < 600 ? status : undefined;
}

/** An error and its causes on one line (drizzle wraps the driver's error as `cause`). */
export function describeError(error: unknown): string {
  const parts: string[] = [];
  for (let current: unknown = error, depth = 0; current !== undefined && depth < 4; depth++) {
    parts.push(current instanceof Error ? current.message.split("\n")[0]! : String(current));
    current = current instanceof Error ? current.cause : undefined;
  }
  return parts.join(" ← ");
}
