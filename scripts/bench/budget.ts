/**
 * What the budget check costs per model call, through a local Worker (`npm run dev`: real workerd,
 * Durable Objects, PGlite) with the in-Worker demo model (EDGECLAW_FAKE_MODEL=1: no network, so
 * the budget round trips are not hidden behind a slow provider). Two agents in the same instance:
 *   plain    no budget: the meter only records the call in the SessionDO
 *   capped   budgets.agents.capped day + month caps: each model call also reserves its worst case in
 *            the agent's BudgetDO and settles it afterwards (two Durable Object calls)
 * Each request is one OpenAI-compatible chat completion = one fresh session, one run, one model call.
 * Rows alternate (plain, capped, plain, capped) so drift shows up. Sequential by default (latency);
 * --concurrency > 1 shows contention on the one BudgetDO.
 *   npx tsx scripts/bench/budget.ts [-- --requests 150 --concurrency 1]
 */
import { parseArgs } from "node:util";
import { startDevInstance } from "./lib/dev-instance.ts";
import { measure, printTable } from "./lib/measure.ts";
import { estimateRunPlatformCost } from "../../functions/agent/platform-cost.ts";
import { platformPricesSchema } from "../../functions/config/budgets.ts";

const { values } = parseArgs({
  options: {
    requests: { type: "string", default: "150" },
    concurrency: { type: "string", default: "1" },
  },
});
const requests = Math.min(2000, Number(values.requests));
const concurrency = Math.min(32, Number(values.concurrency));
const token = "bench-gateway-token-not-for-production";

const instance = await startDevInstance(
  {
    gateway: { auth: { token } },
    agents: { list: [{ id: "plain", default: true }, { id: "capped" }] },
    budgets: {
      agents: {
        capped: { day: { usd: 1_000_000, tokens: 1_000_000_000_000 }, month: { usd: 10_000_000 } },
      },
    },
  },
  { EDGECLAW_FAKE_MODEL: "1" },
);
try {
  const ask = (agent: string) => async (i: number) => {
    const res = await fetch(`${instance.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({
        model: `openclaw/${agent}`,
        messages: [{ role: "user", content: `question ${i}` }],
      }),
    });
    const json = (await res.json()) as { choices?: Array<{ message?: { content?: string } }> };
    return res.ok && Boolean(json.choices?.[0]?.message?.content);
  };
  await measure("warm-up", 30, 2, ask("plain"));
  await measure("warm-up", 30, 2, ask("capped"));
  const rows = [
    await measure("run, no budget", requests, concurrency, ask("plain")),
    await measure("run, agent budget (reserve + settle)", requests, concurrency, ask("capped")),
    await measure("run, no budget (again)", requests, concurrency, ask("plain")),
    await measure("run, agent budget (again)", requests, concurrency, ask("capped")),
  ];
  console.log(
    `\nedgeclaw budget-check benchmark — ${requests} runs per row (one model call each), concurrency ${concurrency}, loopback, local workerd\n`,
  );
  printTable(rows, rows[0]!);

  // Paired: one plain and one capped run back to back, many times; the median of the differences
  // cancels the drift of a shared machine that separate rows pick up.
  const differences: number[] = [];
  for (let i = 0; i < requests; i++) {
    const t0 = performance.now();
    await ask("plain")(i);
    const t1 = performance.now();
    await ask("capped")(i);
    const t2 = performance.now();
    differences.push(t2 - t1 - (t1 - t0));
  }
  differences.sort((a, b) => a - b);
  const median = differences[Math.floor(differences.length / 2)]!;
  const quartiles: [number, number] = [
    differences[Math.floor(differences.length / 4)]!,
    differences[Math.floor((3 * differences.length) / 4)]!,
  ];
  // The platform estimate the gateway meters per run (run_platform_cost), for 1,000 such messages,
  // with each run's wall time taken as the measured p50 (an upper bound: it includes the HTTP hops).
  const prices = platformPricesSchema.parse({});
  for (const [label, row, scopes] of [
    ["no budget", rows[0]!, 0],
    ["agent budget", rows[1]!, 1],
  ] as const) {
    const perRun = estimateRunPlatformCost(
      { events: 1, alarmPasses: 1, modelCalls: 1, budgetScopes: scopes, wallMs: row.p50Ms },
      prices,
    );
    console.log(
      `platform cost per 1,000 messages (${label}, estimate at list prices): $${(perRun.estimatedUsd * 1000).toFixed(4)}`,
    );
  }
  console.log(
    `\nbudget check per model call (paired, ${requests} pairs): median ${median.toFixed(2)} ms (interquartile ${quartiles[0].toFixed(2)} … ${quartiles[1].toFixed(2)} ms)`,
  );
} finally {
  await instance.stop();
}
