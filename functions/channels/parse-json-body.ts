import type * as z from "zod";

/**
 * The strict prologue every channel runs before it looks at a webhook body or a forwarded socket
 * payload: bytes → UTF-8 → JSON → the channel's zod schema. Whatever fails is a `reason` the channel
 * returns as `malformed` (a 400 that stores nothing), worded the same way for every channel.
 *
 * UTF-8 is decoded with `fatal`: a stray byte makes the body malformed instead of being replaced by
 * U+FFFD, so the text a channel parses is exactly the bytes its signature was checked over.
 */

export type BodyRead<T> = { ok: true; value: T } | { ok: false; reason: string };

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/** The body as text, or "not UTF-8". */
export function readUtf8Body(raw: Uint8Array): BodyRead<string> {
  try {
    return { ok: true, value: strictUtf8.decode(raw) };
  } catch {
    return { ok: false, reason: "body is not UTF-8" };
  }
}

/** The body as a JSON value (not yet checked against anything), or "not UTF-8 JSON". */
export function readJsonBody(raw: Uint8Array): BodyRead<unknown> {
  try {
    return { ok: true, value: JSON.parse(strictUtf8.decode(raw)) as unknown };
  } catch {
    return { ok: false, reason: "body is not UTF-8 JSON" };
  }
}

/**
 * A webhook body read as `what` (e.g. "a Telegram Update"): decoded, parsed and checked by `schema`.
 * A schema failure names the first offending field: `not a Telegram Update (update_id: …)`.
 */
export function parseJsonBody<T>(raw: Uint8Array, schema: z.ZodType<T>, what: string): BodyRead<T> {
  const json = readJsonBody(raw);
  return json.ok ? parsePayload(json.value, schema, what) : json;
}

/** A value that is already JSON (a socket payload forwarded by the companion) checked as `what`. */
export function parsePayload<T>(value: unknown, schema: z.ZodType<T>, what: string): BodyRead<T> {
  const parsed = schema.safeParse(value);
  return parsed.success
    ? { ok: true, value: parsed.data }
    : { ok: false, reason: `not ${what} (${firstIssue(parsed.error)})` };
}

/** The first problem zod found, as `path: message` (`(body)` when it is the value itself). */
export function firstIssue(error: z.ZodError): string {
  const first = error.issues[0];
  return first ? `${first.path.join(".") || "(body)"}: ${first.message}` : "invalid body";
}
