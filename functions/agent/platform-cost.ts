import type { PlatformPrices } from "../config/budgets.ts";

/**
 * AN ESTIMATE, NOT A BILL: what one run costs on the platform, from published list prices
 * (`metering.platformPrices`, defaults in functions/config/budgets.ts) and what the run did:
 *  - Worker requests: one per event the run answers (each arrived as one webhook request);
 *  - Durable Object requests: the accept RPC per event, one alarm per pass (first start + resumes),
 *    and two budget-object calls (reserve, settle) per model call per capped scope;
 *  - Durable Object duration: the run's wall time × the object's billed memory (an object is billed
 *    while active, waiting on the model included);
 *  - Postgres: a fixed number of queries per run (run setup reads the workspace and access tables;
 *    the mirror writes session, transcript, usage, model calls) × assumed compute seconds each.
 * Free allowances are ignored and idle time before hibernation is not counted.
 */

export const POSTGRES_QUERIES_PER_RUN = 6;

export interface RunActivity {
  events: number;
  alarmPasses: number;
  modelCalls: number;
  budgetScopes: number;
  wallMs: number;
}

export interface PlatformCost {
  workerRequests: number;
  doRequests: number;
  doGbSeconds: number;
  postgresQueries: number;
  estimatedUsd: number;
}

export function estimateRunPlatformCost(
  activity: RunActivity,
  prices: PlatformPrices,
): PlatformCost {
  const workerRequests = Math.max(1, activity.events);
  const doRequests =
    workerRequests +
    Math.max(1, activity.alarmPasses) +
    2 * activity.modelCalls * activity.budgetScopes;
  const doGbSeconds = (Math.max(0, activity.wallMs) / 1000) * prices.durableObjectMemoryGb;
  const postgresQueries = POSTGRES_QUERIES_PER_RUN;
  const postgresUsd =
    ((postgresQueries * prices.postgresSecondsPerQuery * prices.postgresComputeUnits) / 3600) *
    prices.postgresComputeUnitHour;
  const estimatedUsd =
    (workerRequests * prices.workerRequestPerMillion) / 1_000_000 +
    (doRequests * prices.durableObjectRequestPerMillion) / 1_000_000 +
    (doGbSeconds * prices.durableObjectGbSecondPerMillion) / 1_000_000 +
    postgresUsd;
  return { workerRequests, doRequests, doGbSeconds, postgresQueries, estimatedUsd };
}
