import type { ContextReport, SessionControl, ToolsQuery } from "./session-control.ts";

/**
 * `/context [list|detail|json]` (concepts/context): what the next run here sends the model — the
 * system prompt and its injected workspace files (raw vs injected, and whether a limit cut them),
 * the skills catalog, the tool list and the tool schemas that count against the window without
 * being shown, and the transcript. `map` (OpenClaw's treemap image) is not built: it says so.
 */
const DETAIL_TOP = 10;

export async function contextCommand(
  args: string,
  session: SessionControl,
  query: ToolsQuery,
): Promise<{ reply: string }> {
  const mode = args.trim().toLowerCase() || "list";
  if (mode === "map")
    return {
      reply:
        "/context map (a treemap image) is not available on this gateway; /context detail lists the same parts with their sizes.",
    };
  if (mode !== "list" && mode !== "detail" && mode !== "json")
    return { reply: "Usage: /context [list|detail|json]" };
  const report = await session.context(query);
  if (mode === "json") return { reply: JSON.stringify(report, null, 2) };
  const lines = listLines(report);
  if (mode === "detail") lines.push(...detailLines(report));
  return { reply: lines.join("\n") };
}

function listLines(report: ContextReport): string[] {
  const total = report.systemPromptChars + report.tools.schemaChars + report.transcript.tokens * 4;
  return [
    "🧠 Context breakdown",
    `Model: ${report.model} · window ${count(report.contextWindow)} tokens`,
    `Bootstrap max/file: ${count(report.bootstrapMaxChars)} chars · max total: ${count(report.bootstrapTotalMaxChars)} chars`,
    `System prompt: ${size(report.systemPromptChars)} (Project Context ${size(report.projectContextChars)})`,
    "Injected workspace files:",
    ...report.files.map(
      (file) =>
        `- ${file.path}: ${file.status}${file.limitedBy ? ` (${file.limitedBy})` : ""} | raw ${size(file.rawChars)} | injected ${size(file.injectedChars)}`,
    ),
    `Skills list (system prompt text): ${size(report.skills.promptChars)} (${report.skills.entries.length} skill${report.skills.entries.length === 1 ? "" : "s"})`,
    `Tools: ${report.tools.names.join(", ") || "none"}`,
    `Tool list (system prompt text): ${size(report.tools.listChars)}`,
    `Tool schemas (JSON): ${size(report.tools.schemaChars)} (counts against the window; not shown as text)`,
    `Transcript: ${report.transcript.messages} message${report.transcript.messages === 1 ? "" : "s"} (~${count(report.transcript.tokens)} tok)${prunedNote(report.transcript.pruned)}`,
    `Estimated total: ~${count(Math.ceil(total / 4))} of ${count(report.contextWindow)} tokens`,
  ];
}

function detailLines(report: ContextReport): string[] {
  const skills = [...report.skills.entries].sort((a, b) => b.chars - a.chars);
  const lines = ["", "Top skills (prompt entry size):"];
  if (skills.length === 0) lines.push("- none");
  for (const skill of skills.slice(0, DETAIL_TOP))
    lines.push(`- ${skill.name}: ${size(skill.chars)}`);
  if (skills.length > DETAIL_TOP) lines.push(`… (+${skills.length - DETAIL_TOP} more skills)`);
  lines.push("Top tools (schema size):");
  for (const tool of report.tools.schemas.slice(0, DETAIL_TOP))
    lines.push(`- ${tool.name}: ${size(tool.chars)}`);
  if (report.tools.schemas.length > DETAIL_TOP)
    lines.push(`… (+${report.tools.schemas.length - DETAIL_TOP} more tools)`);
  return lines;
}

function size(chars: number): string {
  return `${count(chars)} chars (~${count(Math.ceil(chars / 4))} tok)`;
}

function count(n: number): string {
  return n.toLocaleString("en-US");
}

/** Session pruning's share of the transcript line: what the model is sent shortened. */
function prunedNote(pruned: { trimmed: number; cleared: number } | undefined): string {
  if (!pruned) return "";
  return `; old tool results sent trimmed: ${pruned.trimmed}, cleared: ${pruned.cleared} (agents.defaults.contextPruning)`;
}
