import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from "node:dns";
import { Agent as HttpAgent } from "node:http";
import { Agent as HttpsAgent } from "node:https";
import type { LookupFunction } from "node:net";
import {
  blockedAddressReason,
  checkFetchUrl,
  STRICT_SSRF_POLICY,
} from "../../functions/http/ssrf.ts";

/**
 * The private-network guard for a connector whose server is configurable (Mattermost's `baseUrl`,
 * OpenClaw's `network.dangerouslyAllowPrivateNetwork`). The Worker can only judge a host as written;
 * here the host is also resolved, and EVERY address it resolves to must be public. The check runs
 * inside the socket's own DNS lookup (an Agent's `lookup`), so the address judged is the address
 * connected to: a name whose answer changes between a first check and the connect (DNS rebinding)
 * is caught at the connect.
 */

export class PrivateNetworkError extends Error {
  readonly code = "EPRIVATENETWORK";
}

/** Why `url`'s host is refused as written (IP literal or internal name), or undefined. */
export function refusedAsWritten(url: string): string | undefined {
  const checked = checkFetchUrl(url, STRICT_SSRF_POLICY);
  return checked.ok ? undefined : checked.reason;
}

/** dns.lookup, refusing the whole answer when any address in it is private, loopback, link-local or otherwise internal. */
export const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  const all: LookupAllOptions = { ...options, all: true };
  dnsLookup(hostname, all, (error, addresses: LookupAddress[]) => {
    if (error) return callback(error, "", 0);
    for (const { address } of addresses) {
      const reason = blockedAddressReason(address, STRICT_SSRF_POLICY);
      if (reason)
        return callback(
          new PrivateNetworkError(
            `${hostname} resolves to ${address}, ${reason}; private and internal addresses are refused`,
          ),
          "",
          0,
        );
    }
    if (options.all)
      return (callback as unknown as (error: null, addresses: LookupAddress[]) => void)(
        null,
        addresses,
      );
    const first = addresses[0];
    if (!first)
      return callback(
        Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }),
        "",
        0,
      );
    callback(null, first.address, first.family);
  });
};

/**
 * The agent to make every request to `url`'s server with: one that connects only to public
 * addresses, or undefined (Node's default) when private networks are allowed. Throws a
 * PrivateNetworkError when the host is refused as written (an IP literal is never looked up).
 */
export function serverAgent(url: string, allowPrivateNetwork: boolean): HttpAgent | undefined {
  if (allowPrivateNetwork) return undefined;
  const refused = refusedAsWritten(url);
  if (refused)
    throw new PrivateNetworkError(
      `${refused}; set network.dangerouslyAllowPrivateNetwork to reach a LAN/tailnet server`,
    );
  const secure = /^(https|wss):/i.test(url);
  return secure
    ? new HttpsAgent({ lookup: publicOnlyLookup })
    : new HttpAgent({ lookup: publicOnlyLookup });
}
