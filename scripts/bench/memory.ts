/**
 * Memory and CPU of the local stack, process by process, as a user runs it (`npm run dev`: npm,
 * tsx, dev.ts hosting PGlite, wrangler, workerd and whatever else wrangler starts), with the
 * in-Worker demo model (EDGECLAW_FAKE_MODEL=1) and the fake Slack Web API on loopback:
 *   idle          resident memory a few seconds after the ready banner
 *   sessions      workerd's growth with 50 and then 200 live sessions (one DM turn each), per session
 *   long session  workerd's growth from one more session holding a 50-turn conversation
 *   load          the rest of 1,000 signed Slack DMs spread over those 200 sessions; CPU seconds
 *                 per process during the whole run, and resident memory after it
 * Figures are RSS (what `top` shows; shared pages count in each process) and PSS (shared pages
 * split between their users). Nothing leaves the machine.
 *   npx tsx scripts/bench/memory.ts [--sessions 200 --messages 1000 --turns 50 --concurrency 8]
 */
import { parseArgs } from "node:util";
import { signSlackRequest } from "../../functions/channels/slack/verify.ts";
import { startFakeSlackApi } from "../../functions/channels/slack/simulate/slack-api.ts";
import { startDevInstance } from "./lib/dev-instance.ts";
import { cpuSeconds, mib, sampleTree, type ProcessSample } from "./lib/process-tree.ts";

const { values } = parseArgs({
  options: {
    sessions: { type: "string", default: "200" },
    messages: { type: "string", default: "1000" },
    turns: { type: "string", default: "50" },
    concurrency: { type: "string", default: "8" },
    settle: { type: "string", default: "5" },
  },
});
const sessions = Math.max(50, Math.min(1000, Number(values.sessions)));
const turns = Math.max(1, Math.min(200, Number(values.turns)));
const messages = Math.max(sessions + turns, Math.min(10_000, Number(values.messages)));
const concurrency = Math.max(1, Math.min(64, Number(values.concurrency)));
const settleMs = Math.max(0, Number(values.settle)) * 1000;
const signingSecret = "bench-signing-secret-not-for-production";

const fakeSlack = await startFakeSlackApi();
const instance = await startDevInstance(
  {
    session: { dmScope: "per-channel-peer" },
    channels: {
      slack: {
        mode: "http",
        apiBaseUrl: `${fakeSlack.url}/api/`,
        botToken: "xoxb-bench",
        signingSecret,
        dmPolicy: "open",
        allowFrom: ["*"],
      },
    },
  },
  { EDGECLAW_FAKE_MODEL: "1" },
  { viaNpm: true },
);

// A Ctrl-C or a timeout stops the instance too, never leaving a stack behind.
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    void Promise.allSettled([instance.stop(), fakeSlack.stop()]).then(() => process.exit(130));
  });
}

const run = Date.now().toString(36).toUpperCase();
let eventNumber = 0;
const channelOf = (session: number) => `D${run}S${session}`;

async function post(session: number): Promise<boolean> {
  const i = eventNumber++;
  const body = JSON.stringify({
    type: "event_callback",
    team_id: "TBENCH",
    api_app_id: "ABENCH",
    event_id: `Ev${run}${i}`,
    event_time: Math.floor(Date.now() / 1000),
    event: {
      type: "message",
      channel: channelOf(session),
      channel_type: "im",
      user: `U${run}S${session}`,
      text: `bench message ${i}: how are you?`,
      ts: `1700000000.${String(i).padStart(6, "0")}`,
    },
  });
  const timestamp = String(Math.floor(Date.now() / 1000));
  const res = await fetch(`${instance.url}/slack/events`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-slack-request-timestamp": timestamp,
      "x-slack-signature": await signSlackRequest(signingSecret, timestamp, body),
    },
    body,
    signal: AbortSignal.timeout(15_000),
  });
  await res.arrayBuffer();
  return res.status === 200;
}

async function repliesIn(channel?: string): Promise<number> {
  if (!channel)
    return ((await (await fetch(`${fakeSlack.url}/_control/count`)).json()) as { messages: number })
      .messages;
  const stored = (await (
    await fetch(`${fakeSlack.url}/_control/messages?channel=${channel}`)
  ).json()) as { deleted?: boolean }[];
  return stored.filter((message) => !message.deleted).length;
}

/** Sends to each listed session with bounded concurrency, then waits until the replies stop coming. */
async function sendAll(targets: number[]): Promise<number> {
  let next = 0;
  let failed = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let index = next++; index < targets.length; index = next++)
        if (!(await post(targets[index]!).catch(() => false))) failed++;
    }),
  );
  await quiet();
  return failed;
}

/** Until the fake Slack has seen no new reply for 10 s (debounce, alarms and the outbox all wait a little) (at most 5 minutes). */
async function quiet(): Promise<void> {
  const deadline = Date.now() + 300_000;
  let last = -1;
  let stableSince = Date.now();
  while (Date.now() < deadline) {
    const count = await repliesIn();
    if (count !== last) {
      last = count;
      stableSince = Date.now();
    } else if (Date.now() - stableSince > 10_000) return;
    await sleep(500);
  }
}

function progress(text: string) {
  process.stderr.write(`[memory bench ${new Date().toISOString().slice(11, 19)}] ${text}\n`);
}

async function oneTurn(session: number): Promise<void> {
  const before = await repliesIn(channelOf(session));
  await post(session).catch(() => false);
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline && (await repliesIn(channelOf(session))) <= before) await sleep(10);
}

function sleep(ms: number) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

const byRole = (samples: ProcessSample[], pick: (s: ProcessSample) => number) => {
  const totals = new Map<string, number>();
  for (const sample of samples)
    totals.set(sample.role, (totals.get(sample.role) ?? 0) + pick(sample));
  return totals;
};
const total = (samples: ProcessSample[], pick: (s: ProcessSample) => number) =>
  samples.reduce((sum, s) => sum + pick(s), 0);
const workerdRss = (samples: ProcessSample[]) =>
  total(
    samples.filter((s) => s.role === "workerd"),
    (s) => s.rssBytes,
  );

try {
  await sleep(settleMs);
  const idle = sampleTree(instance.pid);
  const cpuStart = idle;
  const started = Date.now();

  progress(`idle sampled; ${sessions} sessions next`);
  let failed = await sendAll(Array.from({ length: 50 }, (_, s) => s));
  const at50 = sampleTree(instance.pid);
  failed += await sendAll(Array.from({ length: sessions - 50 }, (_, s) => s + 50));
  const atAll = sampleTree(instance.pid);
  progress(`${sessions} sessions live; a ${turns}-turn conversation next`);
  const longSession = sessions; // one more session, beside the others
  for (let turn = 0; turn < turns; turn++) await oneTurn(longSession);
  await quiet();
  const afterLong = sampleTree(instance.pid);
  const rest = messages - sessions - turns;
  progress(`${rest} more messages next`);
  failed += await sendAll(Array.from({ length: rest }, (_, i) => i % sessions));
  progress("load done");
  const loaded = sampleTree(instance.pid);
  const seconds = (Date.now() - started) / 1000;
  const replies = await repliesIn();
  await sleep(settleMs);
  const settled = sampleTree(instance.pid);

  const roles = [...new Set([...idle, ...loaded].map((s) => s.role))];
  const rssIdle = byRole(idle, (s) => s.rssBytes);
  const pssIdle = byRole(idle, (s) => s.pssBytes);
  const rssLoaded = byRole(loaded, (s) => s.rssBytes);
  const pssLoaded = byRole(loaded, (s) => s.pssBytes);
  const rssSettled = byRole(settled, (s) => s.rssBytes);
  const cpuBefore = byRole(cpuStart, (s) => s.cpuTicks);
  const cpuAfter = byRole(loaded, (s) => s.cpuTicks);
  const cpuUsed = new Map(
    roles.map((role) => [role, (cpuAfter.get(role) ?? 0) - (cpuBefore.get(role) ?? 0)]),
  );
  const cpuTotal = [...cpuUsed.values()].reduce((a, b) => a + b, 0);

  console.log(
    `\nedgeclaw memory benchmark — npm run dev, demo model, fake Slack; ${eventNumber} messages (${failed} not acked 200), ${replies} replies, ${seconds.toFixed(0)} s\n`,
  );
  const header = [
    "process",
    "count",
    "RSS idle MiB",
    "PSS idle",
    "RSS loaded",
    "PSS loaded",
    `RSS +${settleMs / 1000}s`,
    "CPU s (load)",
    "CPU share",
  ];
  const rows = roles.map((role) => [
    role,
    String(
      loaded.filter((s) => s.role === role).length || idle.filter((s) => s.role === role).length,
    ),
    mib(rssIdle.get(role) ?? 0),
    mib(pssIdle.get(role) ?? 0),
    mib(rssLoaded.get(role) ?? 0),
    mib(pssLoaded.get(role) ?? 0),
    mib(rssSettled.get(role) ?? 0),
    cpuSeconds(cpuUsed.get(role) ?? 0).toFixed(1),
    `${((100 * (cpuUsed.get(role) ?? 0)) / Math.max(1, cpuTotal)).toFixed(0)}%`,
  ]);
  rows.push([
    "total",
    String(loaded.length),
    mib(total(idle, (s) => s.rssBytes)),
    mib(total(idle, (s) => s.pssBytes)),
    mib(total(loaded, (s) => s.rssBytes)),
    mib(total(loaded, (s) => s.pssBytes)),
    mib(total(settled, (s) => s.rssBytes)),
    cpuSeconds(cpuTotal).toFixed(1),
    "100%",
  ]);
  const widths = header.map((title, i) =>
    Math.max(title.length, ...rows.map((row) => row[i]!.length)),
  );
  const format = (cells: string[]) =>
    cells
      .map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
      .join("  ");
  console.log(format(header));
  for (const row of rows) console.log(format(row));

  const idleWorkerd = workerdRss(idle);
  const perSession = (sample: ProcessSample[], count: number) =>
    ((workerdRss(sample) - idleWorkerd) / count / 1024).toFixed(0);
  console.log(
    `\nworkerd RSS: ${mib(idleWorkerd)} MiB with 0 sessions, ${mib(workerdRss(at50))} MiB with 50 (${perSession(at50, 50)} KiB each), ` +
      `${mib(workerdRss(atAll))} MiB with ${sessions} (${perSession(atAll, sessions)} KiB each)`,
  );
  console.log(
    `one more session with a ${turns}-turn conversation: workerd ${mib(workerdRss(atAll))} → ${mib(workerdRss(afterLong))} MiB ` +
      `(${((workerdRss(afterLong) - workerdRss(atAll)) / 1024).toFixed(0)} KiB)`,
  );
} finally {
  await instance.stop();
  await fakeSlack.stop();
}
