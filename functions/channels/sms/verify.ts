/**
 * Twilio request signing (https://www.twilio.com/docs/usage/webhooks/webhooks-security):
 * `X-Twilio-Signature` = base64(HMAC-SHA1(authToken, url + each POST parameter, sorted by name,
 * as name + value with no separators)). The URL is the one Twilio was configured with, byte for
 * byte, without a `#…` connection-override fragment (Twilio does not sign it). Values are the
 * form-decoded values. A name sent more than once contributes each distinct value, sorted, as the
 * official helper libraries do.
 *
 * Which URL: the account's `publicWebhookUrl` when set (behind a proxy the Worker sees another URL
 * than the one Twilio signed), else the URL the Worker received. Twilio's libraries also accept the
 * URL with the default port added or removed (`:443` / `:80`); so does this.
 */

export type TwilioVerifyResult =
  | { ok: true }
  | {
      ok: false;
      reason:
        | "no-secret"
        | "missing-signature"
        | "bad-signature"
        | "unsupported-signature-settings";
    };

const encoder = new TextEncoder();

/** The `X-Twilio-Signature` Twilio sends for a form POST of `params` to `url` (also used by tests, the bench and `simulate`). */
export async function signTwilioRequest(
  authToken: string,
  url: string,
  params: Iterable<[string, string]>,
): Promise<string> {
  const key = await crypto.subtle.importKey(
    "raw",
    encoder.encode(authToken),
    { name: "HMAC", hash: "SHA-1" },
    false,
    ["sign"],
  );
  const mac = new Uint8Array(
    await crypto.subtle.sign("HMAC", key, encoder.encode(signedString(url, params))),
  );
  let binary = "";
  for (const byte of mac) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** url (fragment dropped) + sorted `name` + `value` pairs. */
export function signedString(url: string, params: Iterable<[string, string]>): string {
  const byName = new Map<string, Set<string>>();
  for (const [name, value] of params) {
    let values = byName.get(name);
    if (!values) byName.set(name, (values = new Set()));
    values.add(value);
  }
  // Default JS sort compares UTF-16 code units, as Twilio's Node library does.
  let out = stripFragment(url);
  for (const name of [...byName.keys()].sort()) {
    for (const value of [...byName.get(name)!].sort()) out += name + value;
  }
  return out;
}

export async function verifyTwilioSignature(args: {
  headers: Headers;
  params: Array<[string, string]>;
  /** The URL Twilio was configured with (publicWebhookUrl) or the one the Worker received. */
  url: string;
  authToken: string | undefined;
}): Promise<TwilioVerifyResult> {
  if (!args.authToken) return { ok: false, reason: "no-secret" };
  // SharedKey (Webhook Settings) signatures need a key edgeclaw is not given: refuse, never guess.
  if (args.headers.get("x-twilio-webhooks-signature-settings"))
    return { ok: false, reason: "unsupported-signature-settings" };
  const given = args.headers.get("x-twilio-signature");
  if (!given) return { ok: false, reason: "missing-signature" };
  const givenBytes = encoder.encode(given);
  for (const candidate of urlCandidates(args.url)) {
    const expected = encoder.encode(
      await signTwilioRequest(args.authToken, candidate, args.params),
    );
    if (expected.byteLength === givenBytes.byteLength && constantTimeEqual(expected, givenBytes))
      return { ok: true };
  }
  return { ok: false, reason: "bad-signature" };
}

/** The URL as given, and with its default port added or removed (Twilio keeps whichever the console has). */
function urlCandidates(url: string): string[] {
  const bare = stripFragment(url);
  const match = /^(https?):\/\/([^/?#]*)(.*)$/i.exec(bare);
  if (!match) return [bare];
  const [, scheme, authority, rest] = match as unknown as [string, string, string, string];
  const defaultPort = scheme.toLowerCase() === "https" ? "443" : "80";
  const portMatch = /^(.*?)(?::(\d+))?$/.exec(authority)!;
  const host = portMatch[1]!;
  const port = portMatch[2];
  if (port === undefined) return [bare, `${scheme}://${host}:${defaultPort}${rest}`];
  if (port === defaultPort) return [bare, `${scheme}://${host}${rest}`];
  return [bare];
}

function stripFragment(url: string): string {
  const hash = url.indexOf("#");
  return hash === -1 ? url : url.slice(0, hash);
}

/** workerd's `crypto.subtle.timingSafeEqual`; Node-side scripts (bench, simulate) only sign, never verify. */
function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  const subtle = crypto.subtle as SubtleCrypto & {
    timingSafeEqual(a: ArrayBufferView, b: ArrayBufferView): boolean;
  };
  return subtle.timingSafeEqual(a, b);
}
