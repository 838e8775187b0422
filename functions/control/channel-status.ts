import { desc, inArray, sql } from "drizzle-orm";
import { webhookRouteTable } from "../channels/webhook-routes.ts";
import type { EdgeclawConfig } from "../config/schema.ts";
import type { Db } from "../db/connection.ts";
import { auditEvents, sessions } from "../db/schema.ts";

/**
 * Per channel and account, what an operator setting up or debugging a channel needs: the webhook URL
 * to paste into the platform (from the route table the Worker serves), when an event last arrived
 * (the session index in Postgres, mirrored from each SessionDO), the last failure (the newest dead
 * letter in the audit trail) and the durable ingress counters (accepted, refused by reason).
 * Channels configured without a webhook route (companion channels, disabled accounts) are listed
 * with `webhookUrl: null`.
 */
export interface ChannelStatus {
  channel: string;
  accountId: string;
  label: string;
  webhookUrl: string | null;
  lastEventAt: string | null;
  lastError: { at: string; reason: string } | null;
  accepted: number;
  refused: Record<string, number>;
}

/** The newest dead letters scanned for each channel's last error. */
const AUDIT_SCAN = 200;

/** `redact` masks secrets in the failure reasons shown (a platform error may echo a token). */
export async function channelStatus(args: {
  config: EdgeclawConfig;
  db: Db;
  metrics: Map<string, number>;
  origin: string;
  redact: (text: string) => string;
}): Promise<ChannelStatus[]> {
  const { config, db, metrics, origin, redact } = args;
  const rows: ChannelStatus[] = [];
  const blank = { lastEventAt: null, lastError: null, accepted: 0, refused: {} };
  for (const { definition, route } of webhookRouteTable(config).values()) {
    rows.push({
      channel: definition.id,
      accountId: route.accountId,
      label: route.label,
      webhookUrl: `${origin}${route.path}`,
      ...blank,
    });
  }
  for (const channel of Object.keys(config.channels)) {
    if (!rows.some((row) => row.channel === channel))
      rows.push({ channel, accountId: "default", label: channel, webhookUrl: null, ...blank });
  }

  const lastEvents = await db
    .select({
      channel: sessions.channel,
      accountId: sql<string>`coalesce(${sessions.lastRoute}->>'accountId', 'default')`,
      at: sql<string>`max(coalesce(${sessions.lastInteractionAt}, ${sessions.updatedAt}))`,
    })
    .from(sessions)
    .groupBy(sql`1`, sql`2`);
  const failures = await db
    .select({ detail: auditEvents.detail, at: auditEvents.createdAt })
    .from(auditEvents)
    .where(inArray(auditEvents.kind, ["outbox.dead_letter", "inbox.dead_letter"]))
    .orderBy(desc(auditEvents.id))
    .limit(AUDIT_SCAN);

  for (const row of rows) {
    const seen = lastEvents.find(
      (event) => event.channel === row.channel && event.accountId === row.accountId,
    );
    row.lastEventAt = seen?.at ? new Date(seen.at).toISOString() : null;
    const failure = failures.find((entry) => detailOf(entry.detail).channel === row.channel);
    const reason = failure ? detailOf(failure.detail).reason : undefined;
    row.lastError =
      failure && typeof reason === "string"
        ? { at: failure.at.toISOString(), reason: redact(reason) }
        : null;
    row.accepted = metrics.get(`edgeclaw_events_accepted_total{channel="${row.channel}"}`) ?? 0;
    row.refused = refusedFor(metrics, row.channel);
  }
  return rows;
}

function detailOf(detail: unknown): Record<string, unknown> {
  return detail !== null && typeof detail === "object" ? (detail as Record<string, unknown>) : {};
}

/** `edgeclaw_events_refused_total{channel="x",reason="y"}` series of one channel, by reason. */
function refusedFor(metrics: Map<string, number>, channel: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [series, value] of metrics) {
    if (!series.startsWith("edgeclaw_events_refused_total{")) continue;
    const labels = Object.fromEntries(
      [...series.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1]!, m[2]!]),
    );
    if (labels.channel === channel && labels.reason)
      out[labels.reason] = (out[labels.reason] ?? 0) + value;
  }
  return out;
}
