import { causeChain } from "./errors.ts";

export interface DescribeOptions {
  /**
   * Only the innermost cause: the transport's own words, never an outer message that may carry a
   * failed query's text and parameters (drizzle puts those there, and they can hold transcript text).
   */
  innermost?: boolean;
  /** Longest description (default 500 characters; 200 for `innermost`). */
  maxChars?: number;
}

/**
 * An error on one line, for logs, dead letters and the user: each cause's first line, outermost
 * first, joined by " ← " (no stack, nothing after a line break). Takes error-like events too (a
 * WebSocket's ErrorEvent from the Postgres driver has a `message` and is no Error).
 */
export function describeError(error: unknown, options: DescribeOptions = {}): string {
  const chain = causeChain(error);
  const parts = options.innermost ? chain.slice(-1) : chain;
  const text = parts.map((current) => messageOf(current).split("\n")[0]!).join(" ← ");
  return text.slice(0, options.maxChars ?? (options.innermost ? 200 : 500));
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  const message =
    typeof error === "object" && error !== null
      ? (error as { message?: unknown }).message
      : undefined;
  return typeof message === "string" && message ? message : String(error);
}
