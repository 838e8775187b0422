import type { Context } from "hono";
import type { Env } from "./env.ts";
import type { EdgeclawConfig } from "../functions/config/schema.ts";
import { configFromEnv } from "../functions/channels/gateway-config.ts";
import { resolveSecret } from "../functions/config/secret-ref.ts";
import type { SigningKey } from "../functions/channels/companion/signature.ts";
import { verifySignedRequest } from "../functions/channels/companion/verify.ts";
import { readBodyCapped } from "../functions/http/read-body.ts";

export type IngressGrant = EdgeclawConfig["companion"]["ingressKeys"][number];

export interface SignedCompanionRequest {
  config: EdgeclawConfig;
  grant: IngressGrant;
  /** The Companion Durable Object of the key's deployment. */
  deployment: string;
  body: Uint8Array;
}

/** The live ingress keys whose secret resolves (a key without its secret verifies nothing). */
export function liveIngressKeys(config: EdgeclawConfig, env: Env): SigningKey[] {
  return config.companion.ingressKeys.flatMap((key) => {
    const secret = resolveSecret(key.secret, env);
    return secret ? [{ id: key.id, secret }] : [];
  });
}

/**
 * The common door of `/internal/companion/*`: capped body, signature over method, path with query,
 * key id and body (signature.ts), and the grant of the key that signed. A Response is the refusal
 * to send back (404 unconfigured, 413, 401).
 */
export async function readSignedCompanionRequest(
  c: Context<{ Bindings: Env }>,
): Promise<SignedCompanionRequest | Response> {
  const config = configFromEnv(c.env);
  const keys = liveIngressKeys(config, c.env);
  if (!keys.length)
    return c.json(
      { error: "companion ingress is not configured (set EDGECLAW_COMPANION_INGRESS_SECRET)" },
      404,
    );
  const body = await readBodyCapped(c.req.raw, config.companion.maxBodyBytes);
  if (!body.ok) return c.json({ error: body.error }, body.status);
  const url = new URL(c.req.url);
  const verified = await verifySignedRequest({
    keys,
    headers: c.req.raw.headers,
    method: c.req.method,
    path: url.pathname + url.search,
    body: body.bytes,
    nowSeconds: Math.floor(Date.now() / 1000),
  });
  if (!verified.ok) return c.json({ error: `unauthorized: ${verified.reason}` }, 401);
  const grant = config.companion.ingressKeys.find((key) => key.id === verified.keyId);
  if (!grant) return c.json({ error: "unauthorized: unknown key id" }, 401);
  return { config, grant, deployment: grant.deployment ?? grant.id, body: body.bytes };
}

export function parseJsonBody(bytes: Uint8Array): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(new TextDecoder().decode(bytes)) };
  } catch {
    return { ok: false };
  }
}

export function companionStub(env: Env, deployment: string) {
  return env.COMPANION.get(env.COMPANION.idFromName(deployment));
}
