import * as z from "zod";

/**
 * The sandbox part of `sessions show` (GET /admin/sessions/:key → `sandbox`, built by the
 * SessionDO, functions/sandbox/report.ts): where the session's commands run, its metered sandbox
 * time, the container of its scope, and its running and finished commands.
 */
const command = z.object({
  id: z.string(),
  command: z.string(),
  state: z.string(),
  exitCode: z.number().nullable(),
  signal: z.string().nullable(),
  timedOut: z.boolean(),
  background: z.boolean(),
  startedAt: z.number(),
  finishedAt: z.number().nullable(),
  durationMs: z.number().nullable(),
});

export const sandboxReportSchema = z.union([
  z.object({
    placement: z
      .object({
        backend: z.string(),
        scope: z.string(),
        network: z.boolean(),
        sandboxed: z.boolean(),
      })
      .nullable(),
    commands: z.array(command),
    usage: z.object({
      commands: z.number(),
      seconds: z.number(),
      containerSeconds: z.number(),
      estimatedUsd: z.number(),
    }),
    container: z
      .union([
        z.object({
          running: z.boolean(),
          generation: z.number(),
          egress: z.object({ kind: z.string(), hosts: z.array(z.string()).optional() }).nullish(),
          openExecs: z.number(),
          awakeMsTotal: z.number(),
          awakeSince: z.number().nullable(),
          starts: z.number(),
          sleepAfter: z.string(),
        }),
        z.object({ error: z.string() }),
      ])
      .optional(),
  }),
  z.object({ error: z.string() }),
]);
export type SandboxReportJson = z.infer<typeof sandboxReportSchema>;

export function formatSandbox(report: SandboxReportJson | undefined): string[] {
  if (!report) return [];
  if ("error" in report) return [`Sandbox: could not be read (${report.error})`];
  if (!report.placement) return [];
  const p = report.placement;
  const lines = [
    `Sandbox: ${p.backend}${p.sandboxed ? "" : " (mode off: not isolated)"}, scope ${p.scope}, network ${p.network ? "allowed" : "none"}; ${report.usage.commands} command${report.usage.commands === 1 ? "" : "s"} finished, ${report.usage.seconds.toFixed(1)} s` +
      (report.usage.containerSeconds
        ? ` (container estimate $${report.usage.estimatedUsd.toFixed(6)})`
        : ""),
  ];
  const c = report.container;
  if (c && "error" in c) lines.push(`  container: could not be asked (${c.error})`);
  else if (c)
    lines.push(
      `  container: ${c.running ? "running" : "asleep"}, generation ${c.generation}, ${c.starts} start${c.starts === 1 ? "" : "s"}, awake ${((c.awakeMsTotal + (c.awakeSince ? Date.now() - c.awakeSince : 0)) / 1000).toFixed(0)} s in all, egress ${c.egress?.kind ?? "none"}${c.egress?.hosts?.length ? ` (${c.egress.hosts.join(", ")})` : ""}, sleeps after ${c.sleepAfter} idle`,
    );
  for (const cmd of report.commands) {
    const how =
      cmd.state === "exited"
        ? cmd.timedOut
          ? "timed out"
          : cmd.signal
            ? `killed (${cmd.signal})`
            : `exit ${cmd.exitCode}`
        : cmd.state;
    const took = cmd.durationMs !== null ? `, ${(cmd.durationMs / 1000).toFixed(1)} s` : "";
    lines.push(
      `  ${cmd.id} [${how}${took}${cmd.background ? ", background" : ""}] ${cmd.command.replace(/\s+/g, " ").slice(0, 120)}`,
    );
  }
  return lines;
}
