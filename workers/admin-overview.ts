import { Hono } from "hono";
import * as z from "zod";
import { rawConfigFromEnv } from "../functions/config/load.ts";
import { configFromEnv } from "../functions/channels/gateway-config.ts";
import { withDb } from "../functions/db/client.ts";
import { channelStatus } from "../functions/control/channel-status.ts";
import { configReport } from "../functions/control/config-report.ts";
import { MAX_SPEND_DAYS, spendByDay } from "../functions/control/spend.ts";
import { secretMasker } from "../functions/logging/logger.ts";
import { scrapeShards } from "../functions/metrics/shards.ts";
import { postgresAccessStore } from "../functions/routing/access-store-postgres.ts";
import type { Env } from "./env.ts";

/**
 * Read-only overviews for the control page, each one call. Mounted at the root of workers/admin.ts,
 * whose gateway-token check runs first (a check here would run again for every admin path):
 *
 *   GET /admin/pairing                 pending pairing requests of every configured channel
 *   GET /admin/channels/status         per channel/account: webhook URL, last event, last error, counts
 *   GET /admin/spend?days=14           model spend per day × agent × channel
 *   GET /admin/config/report           config check + required secrets (set or not) + channels enabled
 */
export const adminOverview = new Hono<{ Bindings: Env }>();

adminOverview.get("/pairing", async (c) => {
  const config = configFromEnv(c.env);
  const now = Date.now();
  const requests = await withDb(c.env, async (db) => {
    const store = postgresAccessStore(db);
    const lists = await Promise.all(
      Object.keys(config.channels).map((channel) =>
        store.listPairingRequests(channel, undefined, now),
      ),
    );
    return lists.flat();
  });
  return c.json({
    requests: requests.map((r) => ({
      channel: r.channel,
      accountId: r.accountId,
      senderId: r.senderId,
      senderName: r.senderName ?? null,
      code: r.code,
      createdAt: new Date(r.createdAt).toISOString(),
      expiresAt: new Date(r.expiresAt).toISOString(),
    })),
  });
});

adminOverview.get("/channels/status", async (c) => {
  const config = configFromEnv(c.env);
  const metrics = await scrapeShards(c.env.METRICS);
  const origin = new URL(c.req.url).origin;
  const redact = secretMasker(config, c.env as unknown as Record<string, unknown>);
  const channels = await withDb(c.env, (db) =>
    channelStatus({ config, db, metrics, origin, redact }),
  );
  return c.json({ channels });
});

adminOverview.get("/spend", async (c) => {
  const days = z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_SPEND_DAYS)
    .safeParse(c.req.query("days") ?? 14);
  if (!days.success)
    return c.json(
      {
        error: {
          message: `days: 1 to ${MAX_SPEND_DAYS}`,
          type: "admin_error",
          code: "invalid_query",
        },
      },
      400,
    );
  const timeZone = configFromEnv(c.env).budgets.timeZone;
  const rows = await withDb(c.env, (db) =>
    spendByDay(db, { days: days.data, timeZone, now: Date.now() }),
  );
  return c.json({ days: days.data, timeZone, rows });
});

adminOverview.get("/config/report", (c) => {
  let raw: unknown;
  try {
    raw = rawConfigFromEnv(c.env);
  } catch (error) {
    return c.json({
      ok: false,
      errors: [`the config is not JSON: ${error instanceof Error ? error.message : String(error)}`],
      warnings: [],
      secrets: [],
      channels: [],
    });
  }
  return c.json(configReport(raw, c.env as unknown as Record<string, unknown>));
});
