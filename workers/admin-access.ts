import { Hono } from "hono";
import * as z from "zod";
import { configFromEnv } from "../functions/channels/gateway-config.ts";
import { withDb } from "../functions/db/client.ts";
import { postgresAccessStore } from "../functions/routing/access-store-postgres.ts";
import { normalizeAccountId } from "../functions/routing/ids.ts";
import { approvePairingCode, rejectPairingCode } from "../functions/routing/pairing.ts";
import { actorOf, fail, readJson } from "./admin-http.ts";
import type { Env } from "./env.ts";

/**
 * Who may talk to the agent, mounted at /admin by admin.ts (its requireGatewayToken guards it):
 * pending pairing requests and their approval or rejection, and the approved senders
 * (allowlist) of each channel. Every change is audited.
 */
export const adminAccess = new Hono<{ Bindings: Env }>();

const channelParam = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/i);

// ---- pairing --------------------------------------------------------------------------------

adminAccess.get("/pairing/:channel", async (c) => {
  const channel = c.req.param("channel");
  if (!channelParam.safeParse(channel).success)
    return fail(c, 400, "invalid_channel", `invalid channel id "${channel}"`);
  const account = c.req.query("account");
  const requests = await withDb(c.env, (db) =>
    postgresAccessStore(db).listPairingRequests(
      channel,
      account ? normalizeAccountId(account) : undefined,
      Date.now(),
    ),
  );
  return c.json({
    channel,
    requests: requests.map((r) => ({
      ...r,
      createdAt: new Date(r.createdAt).toISOString(),
      expiresAt: new Date(r.expiresAt).toISOString(),
    })),
  });
});

const codeBody = z.object({ code: z.string().min(1).max(64) });

for (const action of ["approve", "reject"] as const) {
  adminAccess.post(`/pairing/:channel/${action}`, async (c) => {
    const channel = c.req.param("channel");
    if (!channelParam.safeParse(channel).success)
      return fail(c, 400, "invalid_channel", `invalid channel id "${channel}"`);
    const body = await readJson(c, codeBody);
    if (!body.ok) return fail(c, 400, "invalid_body", body.message);
    const config = configFromEnv(c.env);
    const input = { config, channel, code: body.value.code, actor: actorOf(c), now: Date.now() };
    const result = await withDb(c.env, (db) => {
      const store = postgresAccessStore(db);
      return action === "approve"
        ? approvePairingCode({ ...input, store })
        : rejectPairingCode({ ...input, store });
    });
    if (!result.ok) {
      const headers =
        result.retryAfterMs !== undefined
          ? { "retry-after": String(Math.ceil(result.retryAfterMs / 1000)) }
          : undefined;
      const code =
        result.status === 429
          ? "rate_limited"
          : result.status === 404
            ? "pairing_code_not_found"
            : "invalid_code";
      return fail(c, result.status, code, result.reason, headers);
    }
    const r = result.request;
    return c.json({
      ok: true,
      action,
      channel: r.channel,
      accountId: r.accountId,
      senderId: r.senderId,
      senderName: r.senderName,
      ownerSet: result.ownerSet,
    });
  });
}

// ---- allowlist ------------------------------------------------------------------------------

adminAccess.get("/allowlist/:channel", async (c) => {
  const channel = c.req.param("channel");
  if (!channelParam.safeParse(channel).success)
    return fail(c, 400, "invalid_channel", `invalid channel id "${channel}"`);
  const account = c.req.query("account");
  const entries = await withDb(c.env, (db) =>
    postgresAccessStore(db).listApprovedSenders(
      channel,
      account ? normalizeAccountId(account) : undefined,
    ),
  );
  return c.json({
    channel,
    entries: entries.map((e) => ({ ...e, createdAt: new Date(e.createdAt).toISOString() })),
  });
});

const allowBody = z.object({
  senderId: z.string().min(1).max(256),
  accountId: z.string().min(1).optional(),
});

adminAccess.post("/allowlist/:channel", async (c) => {
  const channel = c.req.param("channel");
  if (!channelParam.safeParse(channel).success)
    return fail(c, 400, "invalid_channel", `invalid channel id "${channel}"`);
  const body = await readJson(c, allowBody);
  if (!body.ok) return fail(c, 400, "invalid_body", body.message);
  const accountId = normalizeAccountId(body.value.accountId);
  const now = Date.now();
  await withDb(c.env, async (db) => {
    const store = postgresAccessStore(db);
    await store.addApprovedSender(
      { channel, accountId, senderId: body.value.senderId, source: "admin" },
      now,
    );
    await store.audit({
      kind: "allowlist.added",
      actor: actorOf(c),
      detail: { channel, accountId, senderId: body.value.senderId },
      at: now,
    });
  });
  return c.json({ ok: true, channel, accountId, senderId: body.value.senderId }, 201);
});

adminAccess.delete("/allowlist/:channel/:senderId", async (c) => {
  const channel = c.req.param("channel");
  const senderId = c.req.param("senderId");
  if (!channelParam.safeParse(channel).success)
    return fail(c, 400, "invalid_channel", `invalid channel id "${channel}"`);
  const accountId = normalizeAccountId(c.req.query("account"));
  const now = Date.now();
  const removed = await withDb(c.env, async (db) => {
    const store = postgresAccessStore(db);
    const done = await store.removeApprovedSender(channel, accountId, senderId);
    if (done)
      await store.audit({
        kind: "allowlist.removed",
        actor: actorOf(c),
        detail: { channel, accountId, senderId },
        at: now,
      });
    return done;
  });
  if (!removed)
    return fail(
      c,
      404,
      "not_found",
      `${senderId} is not on the ${channel} (${accountId}) allowlist`,
    );
  return c.json({ ok: true, channel, accountId, senderId });
});
