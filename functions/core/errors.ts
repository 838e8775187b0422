/**
 * Every failure has a class (DESIGN "Errors have a class"), carried by the error itself and read
 * with `instanceof` and its fields, never from its message:
 * - `transient`: the same work can succeed later (network, 429, 5xx, Postgres down); wait with
 *   bounded backoff, `retryAfterMs` when the other side said how long;
 * - `permanent`: it fails the same way every time (a 4xx, invalid data, a bug); dead-letter the one
 *   event with its reason and go on;
 * - `outcome-unknown`: the request may or may not have taken effect (a timeout after sending);
 *   find out (reconcile) or repeat only with an idempotency key, never blindly.
 */
export type ErrorClass = "transient" | "permanent" | "outcome-unknown";

export interface EdgeclawErrorOptions {
  cause?: unknown;
  /** How long the other side asked us to wait (Retry-After), in ms. */
  retryAfterMs?: number;
}

/** The base of the errors this project throws on purpose: each says its class. */
export class EdgeclawError extends Error {
  readonly errorClass: ErrorClass;
  readonly retryAfterMs?: number;

  constructor(errorClass: ErrorClass, message: string, options: EdgeclawErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.errorClass = errorClass;
    if (options.retryAfterMs !== undefined) this.retryAfterMs = options.retryAfterMs;
  }
}

/** Worth another try later. */
export class TransientError extends EdgeclawError {
  constructor(message: string, options?: EdgeclawErrorOptions) {
    super("transient", message, options);
  }
}

/** Fails the same way every time: retrying runs the same code on the same data. */
export class PermanentError extends EdgeclawError {
  constructor(message: string, options?: EdgeclawErrorOptions) {
    super("permanent", message, options);
  }
}

/** The request may have taken effect: reconcile, or repeat only under an idempotency key. */
export class OutcomeUnknownError extends EdgeclawError {
  constructor(message: string, options?: EdgeclawErrorOptions) {
    super("outcome-unknown", message, options);
  }
}

/** The class an HTTP status gives a failed call: 408, 429 and 5xx pass, the other 4xx do not. */
export function classOfHttpStatus(status: number): "transient" | "permanent" {
  return status === 408 || status === 429 || status >= 500 ? "transient" : "permanent";
}

/** An error and its causes, outermost first (drizzle wraps the driver's error as `cause`). */
export function causeChain(error: unknown, depth = 5): unknown[] {
  const chain: unknown[] = [];
  for (let current = error; current !== undefined && current !== null; ) {
    chain.push(current);
    if (chain.length >= depth) break;
    current = current instanceof Error ? current.cause : undefined;
  }
  return chain;
}
