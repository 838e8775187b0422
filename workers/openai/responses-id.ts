import { notFound } from "./errors.ts";

/**
 * A response id names the session it belongs to: `resp_<session key, base64url>_<32 hex>`. So
 * previous_response_id finds its conversation without any index beside the session, and only
 * that session's own record (random part, scope) makes it a real one: an id that does not decode,
 * or that the session does not hold for this caller, is answered as not found.
 */

export function newResponseId(sessionKey: string): string {
  const random = crypto.randomUUID().replaceAll("-", "");
  return `resp_${toBase64Url(sessionKey)}_${random}`;
}

/** The session key a response id names, or a 404 when it names none. */
export function sessionKeyOfResponseId(id: string): string {
  const match = /^resp_([A-Za-z0-9_-]+)_([0-9a-f]{32})$/.exec(id);
  const key = match ? fromBase64Url(match[1]!) : undefined;
  if (!key || !/^agent:[^:\s]+:\S+$/.test(key))
    throw notFound(
      `Previous response with id '${id}' not found.`,
      "previous_response_not_found",
      "previous_response_id",
    );
  return key;
}

/** The id's random part: the stable suffix of its output items' ids. */
export function responseIdSuffix(id: string): string {
  return id.slice(id.lastIndexOf("_") + 1);
}

function toBase64Url(text: string): string {
  let binary = "";
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

function fromBase64Url(encoded: string): string | undefined {
  try {
    const binary = atob(encoded.replaceAll("-", "+").replaceAll("_", "/"));
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(
      Uint8Array.from(binary, (char) => char.charCodeAt(0)),
    );
  } catch {
    return undefined;
  }
}
