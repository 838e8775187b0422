import * as z from "zod";
import { adminRequest, UsageError } from "./http.ts";
import { renderTable } from "./table.ts";
import type { CommandSpec } from "./command-spec.ts";

/**
 * `edgeclaw cron list|add|rm|enable|disable|run|runs` and `edgeclaw system event` over /admin/cron and
 * /admin/system (OpenClaw's `openclaw cron …` / `openclaw system event`).
 */
const job = z.object({
  id: z.string(),
  agentId: z.string(),
  name: z.string(),
  enabled: z.boolean(),
  schedule: z.record(z.string(), z.unknown()),
  sessionTarget: z.string(),
  nextRunAt: z.number().nullable(),
  lastStatus: z.string().nullable(),
});
const jobList = z.object({ jobs: z.array(job) });
const runList = z.object({
  runs: z.array(
    z.object({
      id: z.string(),
      status: z.string(),
      scheduledFor: z.number(),
      costUsd: z.string(),
      summary: z.string().nullable(),
      error: z.string().nullable(),
    }),
  ),
});

const enc = encodeURIComponent;
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

function scheduleText(schedule: Record<string, unknown>): string {
  if (schedule.kind === "cron") return `cron ${String(schedule.expr)} ${String(schedule.tz)}`;
  if (schedule.kind === "every") return `every ${Number(schedule.everyMs) / 1000}s`;
  return `at ${iso(Number(schedule.atMs))}`;
}

/** The job body from `cron add` flags: one schedule (--cron/--every/--at), one payload (--message/--system-event). */
function jobFromOptions(
  options: Record<string, string | boolean | undefined>,
): Record<string, unknown> {
  const str = (name: string) =>
    typeof options[name] === "string" ? (options[name] as string) : undefined;
  const schedules = [
    str("cron") && { kind: "cron", expr: str("cron"), tz: str("tz") },
    str("every") && { kind: "every", every: str("every") },
    str("at") && { kind: "at", at: str("at"), tz: str("tz") },
  ].filter(Boolean);
  if (schedules.length !== 1) throw new UsageError("give exactly one of --cron, --every, --at");
  const payloads = [
    str("message") && {
      kind: "agentTurn",
      message: str("message"),
      model: str("model"),
      timeoutSeconds: str("timeout-seconds") ? Number(str("timeout-seconds")) : undefined,
    },
    str("system-event") && { kind: "systemEvent", text: str("system-event") },
  ].filter(Boolean);
  if (payloads.length !== 1) throw new UsageError("give exactly one of --message, --system-event");
  if (!str("name")) throw new UsageError("--name is required");
  const channel = str("channel");
  const to = str("to");
  if ((channel === undefined) !== (to === undefined))
    throw new UsageError("announce needs both --channel and --to");
  const keep = str("keep-after-run");
  if (keep !== undefined && keep !== "true" && keep !== "false")
    throw new UsageError("--keep-after-run takes true or false");
  return {
    name: str("name"),
    agentId: str("agent"),
    schedule: schedules[0],
    payload: payloads[0],
    sessionTarget: str("session"),
    wakeMode: str("wake"),
    delivery:
      channel && to ? { mode: "announce", channel, to, accountId: str("account") } : undefined,
    deleteAfterRun: keep === undefined ? undefined : keep === "false",
  };
}

export const CRON_COMMANDS: CommandSpec[] = [
  {
    name: "cron list",
    args: [],
    options: { agent: "id" },
    summary: "scheduled jobs (next run, last status)",
    async run({ options, connection, print }) {
      const json = await adminRequest(
        connection(),
        "GET",
        `/cron${typeof options.agent === "string" ? `?agent=${enc(options.agent)}` : ""}`,
      );
      const data = jobList.parse(json);
      print(json, () =>
        renderTable(
          ["ID", "AGENT", "NAME", "SCHEDULE", "TARGET", "ENABLED", "NEXT RUN", "LAST"],
          data.jobs.map((j) => [
            j.id,
            j.agentId,
            j.name,
            scheduleText(j.schedule),
            j.sessionTarget,
            j.enabled ? "yes" : "no",
            iso(j.nextRunAt),
            j.lastStatus,
          ]),
        ),
      );
      return 0;
    },
  },
  {
    name: "cron add",
    args: [],
    options: {
      name: "name",
      cron: "expr",
      tz: "zone",
      every: "duration",
      at: "time",
      message: "text",
      "system-event": "text",
      session: "main|isolated",
      wake: "now|next-heartbeat",
      channel: "id",
      to: "target",
      account: "id",
      model: "provider/model",
      "timeout-seconds": "n",
      agent: "id",
      "keep-after-run": "true|false",
    },
    summary:
      "add a job: --name, one of --cron/--every/--at, one of --message/--system-event [--channel --to announce]",
    async run({ options, connection, print }) {
      const json = await adminRequest(connection(), "POST", "/cron", jobFromOptions(options));
      const data = z.object({ job }).parse(json);
      print(
        json,
        () =>
          `Added ${data.job.id} (${data.job.name}), next run ${iso(data.job.nextRunAt) ?? "never"}.`,
      );
      return 0;
    },
  },
  {
    name: "cron rm",
    args: ["jobId"],
    options: {},
    summary: "remove a job (its run history stays)",
    async run({ args: [jobId], connection, print }) {
      const json = await adminRequest(connection(), "DELETE", `/cron/${enc(jobId!)}`);
      print(json, () => `Removed ${jobId}.`);
      return 0;
    },
  },
  ...(["enable", "disable"] as const).map(
    (verb): CommandSpec => ({
      name: `cron ${verb}`,
      args: ["jobId"],
      options: {},
      summary:
        verb === "enable"
          ? "turn a job back on (clears an auto-disable and its failure count)"
          : "turn a job off without removing it",
      async run({ args: [jobId], connection, print }) {
        const json = await adminRequest(connection(), "PATCH", `/cron/${enc(jobId!)}`, {
          enabled: verb === "enable",
        });
        const data = z.object({ job }).parse(json);
        print(
          json,
          () =>
            `${verb === "enable" ? "Enabled" : "Disabled"} ${data.job.id}, next run ${iso(data.job.nextRunAt) ?? "never"}.`,
        );
        return 0;
      },
    }),
  ),
  {
    name: "cron run",
    args: ["jobId"],
    options: {},
    summary: "run a job now, outside its schedule",
    async run({ args: [jobId], connection, print }) {
      const json = await adminRequest(connection(), "POST", `/cron/${enc(jobId!)}/run`);
      const data = z.object({ runId: z.string() }).parse(json);
      print(json, () => `Started run ${data.runId}.`);
      return 0;
    },
  },
  {
    name: "cron runs",
    args: ["jobId"],
    options: { limit: "n" },
    summary: "a job's run history (status, cost, result)",
    async run({ args: [jobId], options, connection, print }) {
      const json = await adminRequest(
        connection(),
        "GET",
        `/cron/${enc(jobId!)}/runs${typeof options.limit === "string" ? `?limit=${enc(options.limit)}` : ""}`,
      );
      const data = runList.parse(json);
      print(json, () =>
        renderTable(
          ["RUN", "STATUS", "DUE", "COST USD", "RESULT"],
          data.runs.map((r) => [
            r.id,
            r.status,
            iso(r.scheduledFor),
            r.costUsd,
            (r.error ?? r.summary ?? "").replace(/\s+/g, " ").slice(0, 60),
          ]),
        ),
      );
      return 0;
    },
  },
  {
    name: "system event",
    args: [],
    options: { text: "text", mode: "now|next-heartbeat", agent: "id" },
    summary: "queue a system event for the main session; --mode now wakes the heartbeat",
    async run({ options, connection, print }) {
      if (typeof options.text !== "string") throw new UsageError("--text is required");
      const json = await adminRequest(connection(), "POST", "/system/event", {
        text: options.text,
        mode: options.mode,
        agentId: options.agent,
      });
      const data = z
        .object({
          sessionKey: z.string(),
          mode: z.string(),
          heartbeat: z.object({ ok: z.boolean(), reason: z.string().optional() }).nullable(),
        })
        .parse(json);
      print(
        json,
        () =>
          `Queued for ${data.sessionKey}.${data.heartbeat ? (data.heartbeat.ok ? " Heartbeat woken." : ` Heartbeat not woken: ${data.heartbeat.reason}.`) : " It joins the next run."}`,
      );
      return 0;
    },
  },
];
