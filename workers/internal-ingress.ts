import { Hono } from "hono";
import type { Env } from "./env.ts";
import { configFromEnv } from "../functions/channels/gateway-config.ts";
import { resolveSecret } from "../functions/config/secret-ref.ts";
import { inboundEnvelopeSchema } from "../functions/core/envelope.ts";
import type { SigningKey } from "../functions/channels/companion/signature.ts";
import { verifySignedRequest } from "../functions/channels/companion/verify.ts";
import { authorizeIngressEnvelope } from "../functions/channels/companion/authorize.ts";
import { readBodyCapped } from "../functions/http/read-body.ts";
import { ingestEnvelope } from "./ingest.ts";
import { meterIngress } from "./metrics.ts";

/**
 * POST /internal/ingress — where the companion container (socket-only channels) and other trusted
 * senders hand over an InboundEnvelope. Signed (functions/channels/companion/signature.ts); the
 * signing key may speak only for its own channels (authorize.ts, 403 otherwise); joins the path of
 * every other channel at routing, and answers only after the SessionDO stored the event.
 */
export const internalIngress = new Hono<{ Bindings: Env }>();

internalIngress.post("/ingress", meterIngress("internal"), async (c) => {
  const config = configFromEnv(c.env);
  const keys: SigningKey[] = config.companion.ingressKeys.flatMap((key) => {
    const secret = resolveSecret(key.secret, c.env);
    return secret ? [{ id: key.id, secret }] : [];
  });
  if (!keys.length)
    return c.json(
      { error: "internal ingress is not configured (set EDGECLAW_COMPANION_INGRESS_SECRET)" },
      404,
    );

  const body = await readBodyCapped(c.req.raw, config.companion.maxBodyBytes);
  if (!body.ok) return c.json({ error: body.error }, body.status);

  const path = new URL(c.req.url).pathname;
  const verified = await verifySignedRequest({
    keys,
    headers: c.req.raw.headers,
    method: "POST",
    path,
    body: body.bytes,
    nowSeconds: Math.floor(Date.now() / 1000),
  });
  if (!verified.ok) return c.json({ error: `unauthorized: ${verified.reason}` }, 401);

  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(body.bytes));
  } catch {
    return c.json({ error: "malformed JSON body" }, 400);
  }
  const envelope = inboundEnvelopeSchema.safeParse(json);
  if (!envelope.success) {
    return c.json(
      {
        error: "invalid envelope",
        issues: envelope.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`),
      },
      400,
    );
  }
  const grant = config.companion.ingressKeys.find((key) => key.id === verified.keyId);
  const authorized = grant
    ? authorizeIngressEnvelope(grant, envelope.data)
    : { ok: false as const, reason: "unknown key id" };
  if (!authorized.ok) return c.json({ error: `forbidden: ${authorized.reason}` }, 403);
  const outcome = await ingestEnvelope(c.env, envelope.data);
  return c.json(
    outcome,
    200,
    outcome.status === "unrouted" ? { "x-edgeclaw-ingest": "unrouted" } : {},
  );
});
