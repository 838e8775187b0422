import { and, gte, sql } from "drizzle-orm";
import type { Db } from "../db/connection.ts";
import { modelCalls } from "../db/schema.ts";

/**
 * Model spend per day, agent and channel over the last `days` days, summed from `model_calls` (one
 * row per model call of every kind, priced at the time of the call). Days are calendar days in
 * `timeZone` (the budgets' zone, so the chart's days are the budget's days). The control page draws
 * its charts from these rows; the totals are the same numbers /admin/budgets counts against caps.
 */
export interface SpendRow {
  day: string;
  agentId: string;
  channel: string;
  usd: number;
  tokens: number;
  calls: number;
}

export const MAX_SPEND_DAYS = 366;

export async function spendByDay(
  db: Db,
  options: { days: number; timeZone: string; now: number },
): Promise<SpendRow[]> {
  const since = new Date(options.now - options.days * 86_400_000);
  const day = sql<string>`to_char(${modelCalls.createdAt} at time zone ${options.timeZone}, 'YYYY-MM-DD')`;
  const rows = await db
    .select({
      day,
      agentId: modelCalls.agentId,
      channel: sql<string>`coalesce(${modelCalls.channel}, 'none')`,
      usd: sql<number>`sum(${modelCalls.costUsd})`,
      tokens: sql<number>`sum(${modelCalls.inputTokens} + ${modelCalls.outputTokens} + ${modelCalls.cacheReadTokens} + ${modelCalls.cacheWriteTokens})`,
      calls: sql<number>`count(*)`,
    })
    .from(modelCalls)
    .where(and(gte(modelCalls.createdAt, since)))
    // By position: the day expression carries the zone as a bind parameter, and Postgres does not
    // see two parameters as the same expression.
    .groupBy(sql`1`, sql`2`, sql`3`)
    .orderBy(sql`1`);
  return rows.map((row) => ({
    day: row.day,
    agentId: row.agentId,
    channel: row.channel,
    usd: Number(row.usd),
    tokens: Number(row.tokens),
    calls: Number(row.calls),
  }));
}
