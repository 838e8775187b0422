import { signRequest } from "../../../functions/channels/companion/signature.ts";

/** The companion's signature on one request to the Worker's internal ingress. */
export function signCompanion(
  key: { id: string; secret: string },
  method: string,
  path: string,
  body: string,
): Promise<Record<string, string>> {
  return signRequest(key, {
    method,
    path,
    body: new TextEncoder().encode(body),
    timestamp: Math.floor(Date.now() / 1000),
  });
}
