/**
 * What one plain message costs inside edgeclaw: a local Worker (`npm run dev`: real workerd,
 * Durable Objects, PGlite; demo model; fake Slack) with EDGECLAW_STEP_PROFILE=1, so every SessionDO
 * logs, per accept and per alarm pass, the wall time, SQLite rows written and read (the cursors' own
 * counters: rows written are billed, $1.00 per million) and Durable Object calls of each step
 * (durable-objects/session/upkeep/step-profile.ts). One Slack DM at a time, each answered before the
 * next: the first message of a new session, then a second message in the same session.
 *
 * With --baseline <dir> (a checkout of an earlier commit with `npm ci` done, e.g.
 * `git worktree add /tmp/bench-base <commit>`), the same run starts that checkout's dev too and
 * prints both side by side, and each one's dev start time (spawn → "edgeclaw ready").
 *   npx tsx scripts/bench/message-cost.ts [--messages 5] [--baseline /tmp/bench-base] [--statements]
 * --statements also lists every statement that wrote rows, with its count.
 */
import { parseArgs } from "node:util";
import { signSlackRequest } from "../../functions/channels/slack/verify.ts";
import { startFakeSlackApi } from "../../functions/channels/slack/simulate/slack-api.ts";
import { startDevInstance, type DevInstance } from "./lib/dev-instance.ts";
import { replyLands } from "./lib/channel-bench.ts";

const { values } = parseArgs({
  options: {
    messages: { type: "string", default: "5" },
    baseline: { type: "string" },
    statements: { type: "boolean", default: false },
  },
});
const messages = Math.max(1, Math.min(50, Number(values.messages)));
const signingSecret = "bench-signing-secret-not-for-production";

interface Profile {
  trigger: string;
  rowsWritten: number;
  doCalls: number;
  steps: Record<string, { ms: number; rowsWritten: number; rowsRead: number; statements: number }>;
  tables: Record<string, number>;
  /** Rows written per statement (`step: SQL`); absent from profiles of older checkouts. */
  writes?: Record<string, number>;
  calls: Record<string, { count: number; ms: number; step: string }>;
}

/** One message's totals: every profile line its session logged from the send until it went quiet. */
interface MessageCost {
  replyMs: number;
  rowsWritten: number;
  /** Durable Object calls: the Worker's SessionDO.accept plus those the SessionDO made. */
  doCalls: number;
  passes: number;
  steps: Map<string, { ms: number; rows: number }>;
  tables: Map<string, number>;
  writes: Map<string, number>;
  calls: Map<string, { count: number; ms: number }>;
}

const fakeSlack = await startFakeSlackApi();
const config = {
  session: { dmScope: "per-channel-peer" },
  // A cap far above what the demo model spends: every model call reserves and settles for real.
  budgets: { global: { day: { usd: 1000 } } },
  channels: {
    slack: {
      mode: "http",
      apiBaseUrl: `${fakeSlack.url}/api/`,
      botToken: "xoxb-bench",
      signingSecret,
      dmPolicy: "open",
      allowFrom: ["*"],
      streaming: { mode: "off" },
    },
  },
};
const env = { EDGECLAW_FAKE_MODEL: "1", EDGECLAW_STEP_PROFILE: "1" };

const sides: Array<{ name: string; cwd?: string }> = [
  ...(values.baseline ? [{ name: "before", cwd: values.baseline }] : []),
  { name: values.baseline ? "after" : "now" },
];
const results: Array<{ name: string; startMs: number; first: MessageCost[]; next: MessageCost[] }> =
  [];
try {
  for (const side of sides) {
    const started = performance.now();
    const instance = await startDevInstance(config, env, side.cwd ? { cwd: side.cwd } : {});
    const startMs = performance.now() - started;
    try {
      const first: MessageCost[] = [];
      const next: MessageCost[] = [];
      await oneMessage(instance, "DWARM", 0); // isolate start, first DO, first Postgres connection
      for (let i = 0; i < messages; i++) {
        const channel = `D${side.name.toUpperCase()}${Date.now().toString(36).toUpperCase()}${i}`;
        first.push(await oneMessage(instance, channel, 1));
        next.push(await oneMessage(instance, channel, 2));
      }
      results.push({ name: side.name, startMs, first, next });
    } finally {
      await instance.stop();
    }
  }
  print();
} finally {
  await fakeSlack.stop();
}

async function oneMessage(instance: DevInstance, channel: string, n: number): Promise<MessageCost> {
  const from = instance.output().length;
  const body = JSON.stringify({
    type: "event_callback",
    team_id: "TBENCH",
    api_app_id: "ABENCH",
    event_id: `Ev${channel}${n}`,
    event_time: Math.floor(Date.now() / 1000),
    event: {
      type: "message",
      channel,
      channel_type: "im",
      user: `U${channel}`,
      text: `plain message ${n}`,
      ts: `1700000000.${String(n).padStart(6, "0")}`,
    },
  });
  const timestamp = String(Math.floor(Date.now() / 1000));
  const sent = performance.now();
  const res = await fetch(`${instance.url}/slack/events`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-slack-request-timestamp": timestamp,
      "x-slack-signature": await signSlackRequest(signingSecret, timestamp, body),
    },
    body,
  });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`the event was not accepted: HTTP ${res.status}`);
  const landed = await replyLands(async () => {
    const stored = (await (
      await fetch(`${fakeSlack.url}/_control/messages?channel=${channel}`)
    ).json()) as unknown[];
    return stored.length >= n;
  });
  if (!landed) throw new Error(`no reply in ${channel}`);
  const replyMs = performance.now() - sent;
  // The passes after the reply (mirror, metrics, retention) belong to the message too.
  await quiet(instance, 2_000);
  return costOf(profilesIn(instance.output().slice(from)), replyMs);
}

/** Waits until no SessionDO has logged a profile line for `ms` (other log lines do not count). */
async function quiet(instance: DevInstance, ms: number): Promise<void> {
  for (let seen = -1; ; ) {
    const now = profilesIn(instance.output()).length;
    if (now === seen) return;
    seen = now;
    await new Promise((resolve) => setTimeout(resolve, ms));
  }
}

function profilesIn(log: string): Profile[] {
  const found: Profile[] = [];
  for (const match of log.matchAll(/\{"event":"session_step_profile".*\}/g)) {
    try {
      found.push(JSON.parse(match[0]) as Profile);
    } catch {
      // a line cut by the log's own buffering: not counted
    }
  }
  return found;
}

function costOf(profiles: Profile[], replyMs: number): MessageCost {
  const cost: MessageCost = {
    replyMs,
    rowsWritten: 0,
    doCalls: 0,
    passes: 0,
    steps: new Map(),
    tables: new Map(),
    writes: new Map(),
    calls: new Map(),
  };
  for (const profile of profiles) {
    cost.rowsWritten += profile.rowsWritten;
    cost.doCalls += profile.doCalls;
    if (profile.trigger === "alarm") cost.passes += 1;
    if (profile.trigger === "accept") {
      cost.doCalls += 1; // the Worker's SessionDO.accept RPC that this profile line reports
      add(cost.calls, "SESSIONS.accept", { count: 1, ms: profile.steps.accept?.ms ?? 0 });
    }
    for (const [step, figures] of Object.entries(profile.steps)) {
      const entry = cost.steps.get(step) ?? { ms: 0, rows: 0 };
      entry.ms += figures.ms;
      entry.rows += figures.rowsWritten;
      cost.steps.set(step, entry);
    }
    for (const [table, rows] of Object.entries(profile.tables))
      cost.tables.set(table, (cost.tables.get(table) ?? 0) + rows);
    for (const [statement, rows] of Object.entries(profile.writes ?? {}))
      cost.writes.set(statement, (cost.writes.get(statement) ?? 0) + rows);
    for (const [name, call] of Object.entries(profile.calls)) add(cost.calls, name, call);
  }
  return cost;
}

function add(
  map: Map<string, { count: number; ms: number }>,
  key: string,
  value: { count: number; ms: number },
) {
  const entry = map.get(key) ?? { count: 0, ms: 0 };
  entry.count += value.count;
  entry.ms += value.ms;
  map.set(key, entry);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

function print(): void {
  const header = results.map((r) => r.name.padStart(16)).join("");
  const line = (label: string, pick: (r: (typeof results)[number]) => string) =>
    console.log(`${label.padEnd(44)}${results.map((r) => pick(r).padStart(16)).join("")}`);
  console.log(
    `\nedgeclaw: one plain Slack DM (demo model, budgets on, PGlite mirror), median of ${messages}; loopback, local workerd\n`,
  );
  console.log(`${"".padEnd(44)}${header}`);
  line("dev start: spawn → ready (s)", (r) => (r.startMs / 1000).toFixed(1));
  for (const [kind, label] of [
    ["first", "first message of a new session"],
    ["next", "next message, same session"],
  ] as const) {
    console.log(`\n${label}`);
    line("  event → reply in Slack (ms)", (r) => median(r[kind].map((c) => c.replyMs)).toFixed(0));
    line("  SQLite rows written", (r) => median(r[kind].map((c) => c.rowsWritten)).toFixed(0));
    line("  Durable Object calls", (r) => median(r[kind].map((c) => c.doCalls)).toFixed(0));
    line("  alarm passes", (r) => median(r[kind].map((c) => c.passes)).toFixed(0));
    line(
      "  $ per million messages (rows written)",
      (r) => `$${median(r[kind].map((c) => c.rowsWritten)).toFixed(0)}`,
    );
    const steps = new Set(results.flatMap((r) => r[kind].flatMap((c) => [...c.steps.keys()])));
    console.log("  per step: ms / rows written");
    for (const step of steps)
      line(`    ${step}`, (r) => {
        const ms = median(r[kind].map((c) => c.steps.get(step)?.ms ?? 0));
        const rows = median(r[kind].map((c) => c.steps.get(step)?.rows ?? 0));
        return `${ms.toFixed(0)} / ${rows.toFixed(0)}`;
      });
    const tables = new Set(results.flatMap((r) => r[kind].flatMap((c) => [...c.tables.keys()])));
    console.log("  rows written per table");
    for (const table of tables)
      line(`    ${table}`, (r) => median(r[kind].map((c) => c.tables.get(table) ?? 0)).toFixed(0));
    if (values.statements) printStatements(kind);
    const calls = new Set(results.flatMap((r) => r[kind].flatMap((c) => [...c.calls.keys()])));
    console.log("  Durable Object calls: count / ms");
    for (const call of calls)
      line(`    ${call}`, (r) => {
        const count = median(r[kind].map((c) => c.calls.get(call)?.count ?? 0));
        const ms = median(r[kind].map((c) => c.calls.get(call)?.ms ?? 0));
        return `${count.toFixed(0)} / ${ms.toFixed(0)}`;
      });
  }
  console.log(
    "\n(rows written are each cursor's rowsWritten, indexes included, as billed; $1.00 per million rows: rows × $1 per million messages. Worker-side metrics go to the shard in coalesced batches and are not per message.)",
  );
}

/** --statements: every writing statement of each side's last message, with its rows written. */
function printStatements(kind: "first" | "next"): void {
  for (const result of results) {
    console.log(`  rows written per statement (${result.name}, last message)`);
    for (const [statement, rows] of result[kind].at(-1)?.writes ?? [])
      console.log(`    ${String(rows).padStart(3)}  ${statement}`);
  }
}
