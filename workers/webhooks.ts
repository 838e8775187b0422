import type { MiddlewareHandler } from "hono";
import type { Env } from "./env.ts";
import type { AcceptResult, WebhookRequest } from "../functions/channels/channel.ts";
import type { InboundEnvelope } from "../functions/core/envelope.ts";
import { defaultWebhookAck, withStoredEvents } from "../functions/channels/webhook-ack.ts";
import { webhookRouteTable, type WebhookTableEntry } from "../functions/channels/webhook-routes.ts";
import { readBodyCapped } from "../functions/http/read-body.ts";
import { configFromEnv } from "../functions/channels/gateway-config.ts";
import { ingestEnvelope, type IngestOutcome } from "./ingest.ts";
import { observeIngress } from "./metrics.ts";

/**
 * The one webhook handler every channel goes through. Paths come from the config, which is only
 * known per request, so this is a middleware: it claims requests on a registered channel's path
 * and lets everything else through. It owns the order; the channel supplies the pieces
 * (functions/channels/channel.ts). No Postgres and no platform API call sits on this path.
 */
export function channelWebhooks(): MiddlewareHandler<{ Bindings: Env }> {
  return async (c, next) => {
    const entry = webhookRouteTable(configFromEnv(c.env)).get(c.req.path);
    if (!entry) return next();
    const methods = entry.webhook.methods ?? ["POST"];
    // A channel's path answers other methods with 405, so `curl <callback URL>` shows the path is served (Mattermost's check).
    if (!methods.includes(c.req.method))
      return c.json({ error: `method ${c.req.method} not allowed` }, 405, {
        allow: methods.join(", "),
      });
    const startedAt = Date.now();
    const response = await handleWebhook(c.req.raw, c.req.path, entry, c.env, (envelope) =>
      ingestEnvelope(c.env, envelope),
    );
    observeIngress(c, entry.definition.id, response, startedAt);
    return response;
  };
}

export type AcceptEnvelope = (envelope: InboundEnvelope) => Promise<IngestOutcome>;

export async function handleWebhook(
  request: Request,
  path: string,
  entry: WebhookTableEntry,
  env: Env,
  accept: AcceptEnvelope,
): Promise<Response> {
  const { definition, webhook, route } = entry;
  const receivedAt = Date.now();
  // 1. Cap the body and read it once: signatures are computed over exactly these bytes.
  const body = await readBodyCapped(request, webhook.maxBodyBytes(route));
  if (!body.ok) return Response.json({ error: "body too large" }, { status: 413 });
  const webhookRequest: WebhookRequest = {
    method: request.method,
    url: request.url,
    path,
    headers: request.headers,
    raw: body.bytes,
    receivedAt,
  };

  // 2. Verify. Nothing is stored on a refusal; a missing secret refuses (never open) and says so.
  const verified = await webhook.verify(webhookRequest, route, env);
  if (!verified.ok) {
    if (verified.reason === "no-secret")
      console.error(
        `channels.${definition.id} (${route.label}): no secret configured; refusing requests`,
      );
    return Response.json(
      { error: `signature check failed: ${verified.reason}` },
      { status: verified.status ?? 401 },
    );
  }

  // 3. Handshakes and probes get their exact answer; a body that is not the platform's shape is 400.
  const parsed = await webhook.parse(webhookRequest, route, env);
  if (parsed.kind === "respond") return parsed.response;
  if (parsed.kind === "malformed")
    return Response.json(
      { error: `malformed ${definition.id} request: ${parsed.reason}` },
      { status: 400 },
    );

  // 4. Durable accept of every envelope, in parallel; the ack follows only what was stored.
  const settled = await Promise.allSettled(parsed.envelopes.map((envelope) => accept(envelope)));
  const outcomes: AcceptResult["outcomes"] = settled.map((result) => {
    if (result.status === "fulfilled") return result.value;
    const error = result.reason instanceof Error ? result.reason.message : String(result.reason);
    console.error(`channels.${definition.id} (${route.label}): event not accepted`, error);
    return { status: "failed", error };
  });
  const result: AcceptResult = {
    allStored: outcomes.every((outcome) => outcome.status !== "failed"),
    outcomes,
    ...(parsed.ackHint !== undefined ? { ackHint: parsed.ackHint } : {}),
    ...(parsed.dropped?.length ? { dropped: parsed.dropped } : {}),
  };
  const ack = webhook.ack ? webhook.ack(result, route) : defaultWebhookAck(result);
  // Which session holds each stored event: operators (and `edgeclaw simulate`) ask the admin API
  // what became of it (/admin/sessions/:key/events/:dedupKey).
  return withStoredEvents(
    ack,
    outcomes.flatMap((outcome, index) =>
      outcome.status === "accepted" || outcome.status === "duplicate"
        ? [{ sessionKey: outcome.sessionKey, dedupKey: parsed.envelopes[index]!.dedupKey }]
        : [],
    ),
  );
}
