import { causeChain, classOfHttpStatus, EdgeclawError, type ErrorClass } from "./errors.ts";
import { describeError } from "./describe-error.ts";

export interface ClassifiedError {
  class: ErrorClass;
  /** One line for the log, the dead letter and the user (no query parameters, no stack). */
  reason: string;
  retryAfterMs?: number;
}

/**
 * SQLSTATE classes that mean "the database is unavailable right now", not "this statement is
 * wrong": connection exceptions (08), insufficient resources (53), operator intervention such as
 * a restart (57P), and serialization failures / deadlocks (40001, 40P01).
 */
const TRANSIENT_SQLSTATE = /^(08|53|57P|40001|40P01)/;

/**
 * The class of a failure, from what it is, never from what it says. Down the cause chain, the
 * first that knows decides: one of our errors (EdgeclawError: its class), a Postgres error (its
 * SQLSTATE `code`), an HTTP failure (its `status`). Otherwise a defect in our code or data (a
 * TypeError, a ZodError, …) is permanent, since retrying runs the same code on the same data; and
 * anything else (a dropped socket, `fetch`'s network errors, which workerd throws as plain Errors)
 * is worth a few tries: the bound on attempts still ends it.
 */
export function classifyError(error: unknown): ClassifiedError {
  const reason = describeError(error);
  for (const current of causeChain(error)) {
    if (current instanceof EdgeclawError)
      return {
        class: current.errorClass,
        reason,
        ...(current.retryAfterMs !== undefined ? { retryAfterMs: current.retryAfterMs } : {}),
      };
    const code = sqlState(current);
    if (code) return { class: TRANSIENT_SQLSTATE.test(code) ? "transient" : "permanent", reason };
    const status = httpStatus(current);
    if (status !== undefined) return { class: classOfHttpStatus(status), reason };
  }
  return { class: isDefect(error) ? "permanent" : "transient", reason };
}

/** Errors that are defects in our code or data, by name (a ZodError is one too). */
const DEFECTS = new Set([
  "TypeError",
  "ReferenceError",
  "SyntaxError",
  "RangeError",
  "ZodError",
  "URIError",
]);

function isDefect(error: unknown): boolean {
  return error instanceof Error && DEFECTS.has(error.name);
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
