import { Hono } from "hono";
import type { Env } from "./env.ts";
import {
  accountsForKey,
  findSocketAccount,
} from "../functions/channels/companion/socket-accounts.ts";
import { authorizeSocketAccount } from "../functions/channels/companion/authorize.ts";
import {
  eventsRequestSchema,
  leaseRequestSchema,
  statePutSchema,
  stateBatchPutSchema,
  stateBatchReadSchema,
  stateQuerySchema,
  statusReportSchema,
} from "../functions/channels/companion/wire.ts";
import { companionStub, parseJsonBody, readSignedCompanionRequest } from "./companion-signed.ts";
import { storeSocketEvents } from "./companion-events.ts";

/**
 * `/internal/companion/*` (COMPANION.md "Wire"): what a companion process needs from the Worker —
 * its accounts, the durable accept of raw socket events, the lease, fenced connector state, and
 * status for /health. Every request is signed with an ingress key, and a key speaks only for the
 * channels and accounts listed with it (403 otherwise).
 */
export const companionApi = new Hono<{ Bindings: Env }>();

companionApi.get("/accounts", async (c) => {
  const signed = await readSignedCompanionRequest(c);
  if (signed instanceof Response) return signed;
  return c.json({ accounts: accountsForKey(signed.config, c.env, signed.grant) });
});

companionApi.post("/events", async (c) => {
  const signed = await readSignedCompanionRequest(c);
  if (signed instanceof Response) return signed;
  const json = parseJsonBody(signed.body);
  if (!json.ok) return c.json({ error: "malformed JSON body" }, 400);
  const request = eventsRequestSchema.safeParse(json.value);
  if (!request.success)
    return c.json(
      {
        error: "invalid events request",
        issues: request.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`),
      },
      400,
    );
  const { channel, accountId, events } = request.data;
  if (events.length > signed.config.companion.maxEventsPerRequest)
    return c.json(
      {
        error: `at most ${signed.config.companion.maxEventsPerRequest} events per request (companion.maxEventsPerRequest)`,
      },
      413,
    );
  const authorized = authorizeSocketAccount(signed.grant, channel, accountId);
  if (!authorized.ok) return c.json({ error: `forbidden: ${authorized.reason}` }, 403);
  const target = findSocketAccount(signed.config, c.env, channel, accountId);
  if (!target)
    return c.json(
      {
        error: `${channel} account "${accountId}" is not served over the companion (not enabled, or not in socket mode)`,
      },
      404,
    );
  return c.json({ results: await storeSocketEvents(c.env, signed.grant, target, request.data) });
});

companionApi.post("/lease", async (c) => {
  const signed = await readSignedCompanionRequest(c);
  if (signed instanceof Response) return signed;
  const json = parseJsonBody(signed.body);
  const request = json.ok ? leaseRequestSchema.safeParse(json.value) : undefined;
  if (!request?.success)
    return c.json({ error: "expected { instanceId, action: acquire | renew | release }" }, 400);
  const answer = await companionStub(c.env, signed.deployment).lease(
    request.data.instanceId,
    request.data.action,
    signed.config.companion.leaseTtlMs,
  );
  if (!answer.ok) return c.json({ holder: answer.holder, retryAfterMs: answer.retryAfterMs }, 409);
  return c.json({ epoch: answer.epoch, ttlMs: answer.ttlMs });
});

companionApi.get("/state", async (c) => {
  const signed = await readSignedCompanionRequest(c);
  if (signed instanceof Response) return signed;
  const query = stateQuerySchema.safeParse(c.req.query());
  if (!query.success) return c.json({ error: "expected ?channel=&accountId=&key=" }, 400);
  const authorized = authorizeSocketAccount(signed.grant, query.data.channel, query.data.accountId);
  if (!authorized.ok) return c.json({ error: `forbidden: ${authorized.reason}` }, 403);
  return c.json({
    value: await companionStub(c.env, signed.deployment).getState(
      query.data.channel,
      query.data.accountId,
      query.data.key,
    ),
  });
});

companionApi.post("/state", async (c) => {
  const signed = await readSignedCompanionRequest(c);
  if (signed instanceof Response) return signed;
  const json = parseJsonBody(signed.body);
  const request = json.ok ? statePutSchema.safeParse(json.value) : undefined;
  if (!request?.success)
    return c.json({ error: "expected { epoch, channel, accountId, key, value | null }" }, 400);
  const { epoch, channel, accountId, key, value } = request.data;
  const authorized = authorizeSocketAccount(signed.grant, channel, accountId);
  if (!authorized.ok) return c.json({ error: `forbidden: ${authorized.reason}` }, 403);
  const limit = signed.config.companion.maxStateValueBytes;
  if (value !== null && new TextEncoder().encode(value).byteLength > limit)
    return c.json(
      { error: `state value exceeds ${limit} bytes (companion.maxStateValueBytes)` },
      413,
    );
  const written = await companionStub(c.env, signed.deployment).putState(
    epoch,
    channel,
    accountId,
    key,
    value,
  );
  if (!written)
    return c.json({ error: `stale epoch ${epoch}: this instance no longer holds the lease` }, 409);
  return c.json({ ok: true });
});

companionApi.post("/state/read", async (c) => {
  const signed = await readSignedCompanionRequest(c);
  if (signed instanceof Response) return signed;
  const json = parseJsonBody(signed.body);
  const request = json.ok ? stateBatchReadSchema.safeParse(json.value) : undefined;
  if (!request?.success)
    return c.json(
      { error: "expected { channel, accountId, keys: [...] } (at most 1000 keys)" },
      400,
    );
  const { channel, accountId, keys } = request.data;
  const authorized = authorizeSocketAccount(signed.grant, channel, accountId);
  if (!authorized.ok) return c.json({ error: `forbidden: ${authorized.reason}` }, 403);
  return c.json({
    values: await companionStub(c.env, signed.deployment).getStates(channel, accountId, keys),
  });
});

companionApi.post("/state/batch", async (c) => {
  const signed = await readSignedCompanionRequest(c);
  if (signed instanceof Response) return signed;
  const json = parseJsonBody(signed.body);
  const request = json.ok ? stateBatchPutSchema.safeParse(json.value) : undefined;
  if (!request?.success)
    return c.json(
      {
        error:
          "expected { epoch, channel, accountId, entries: [{ key, value | null }] } (at most 1000)",
      },
      400,
    );
  const { epoch, channel, accountId, entries } = request.data;
  const authorized = authorizeSocketAccount(signed.grant, channel, accountId);
  if (!authorized.ok) return c.json({ error: `forbidden: ${authorized.reason}` }, 403);
  const limit = signed.config.companion.maxStateValueBytes;
  const encoder = new TextEncoder();
  const large = entries.find((e) => e.value !== null && encoder.encode(e.value).byteLength > limit);
  if (large)
    return c.json(
      {
        error: `state value of ${large.key} exceeds ${limit} bytes (companion.maxStateValueBytes)`,
      },
      413,
    );
  const written = await companionStub(c.env, signed.deployment).putStates(
    epoch,
    channel,
    accountId,
    entries,
  );
  if (!written)
    return c.json({ error: `stale epoch ${epoch}: this instance no longer holds the lease` }, 409);
  return c.json({ ok: true });
});

companionApi.post("/status", async (c) => {
  const signed = await readSignedCompanionRequest(c);
  if (signed instanceof Response) return signed;
  const json = parseJsonBody(signed.body);
  const request = json.ok ? statusReportSchema.safeParse(json.value) : undefined;
  if (!request?.success)
    return c.json({ error: "expected { epoch, instanceId, connectors: [...] }" }, 400);
  const { epoch, instanceId, connectors } = request.data;
  for (const connector of connectors) {
    const authorized = authorizeSocketAccount(signed.grant, connector.channel, connector.accountId);
    if (!authorized.ok) return c.json({ error: `forbidden: ${authorized.reason}` }, 403);
  }
  const kept = await companionStub(c.env, signed.deployment).report(epoch, instanceId, connectors);
  if (!kept)
    return c.json({ error: `stale epoch ${epoch}: this instance no longer holds the lease` }, 409);
  return c.json({ ok: true });
});
