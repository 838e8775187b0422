import type { BootstrapFileReport, SystemPromptInput } from "./prompt-input.ts";

/**
 * The prompt's Project Context: the workspace files injected into every run (AGENTS.md, SOUL.md,
 * IDENTITY.md, USER.md, BOOTSTRAP.md on a brand-new workspace, MEMORY.md in the owner's private
 * chat), each within its own and the shared character budget, cut in the middle when too long, with
 * a report per file for `/context`. Apart from the renderer (prompt.ts) because this is the one part
 * of the prompt that depends on file contents and budgets; the rest is fixed text and runtime facts.
 */

type BootstrapKind = "required" | "optional" | "first-run" | "memory" | "legacy";

/**
 * Workspace files injected as Project Context, in order. OpenClaw's set is AGENTS, SOUL, IDENTITY,
 * USER, BOOTSTRAP (brand-new workspace only), MEMORY (if present). TOOLS.md is legacy in OpenClaw
 * (its doctor folds it into AGENTS.md `## Tools`); since a Postgres workspace has no doctor pass,
 * a TOOLS.md that exists is injected right after AGENTS.md, and one that does not is not missed.
 * HEARTBEAT.md is not injected: OpenClaw's runtime no longer reads it for normal turns.
 */
export const BOOTSTRAP_FILES: ReadonlyArray<{ path: string; kind: BootstrapKind }> = [
  { path: "AGENTS.md", kind: "required" },
  { path: "TOOLS.md", kind: "legacy" },
  { path: "SOUL.md", kind: "required" },
  { path: "IDENTITY.md", kind: "required" },
  { path: "USER.md", kind: "optional" },
  { path: "BOOTSTRAP.md", kind: "first-run" },
  { path: "MEMORY.md", kind: "memory" },
];

/** USER.md has its own budget, separate from the shared total. */
export const USER_FILE_MAX_CHARS = 4000;
/** Below this many chars of remaining total budget a further file is left out rather than cut to a stub. */
const MIN_USEFUL_SLICE = 64;

export interface ProjectContext {
  text: string | undefined;
  reports: BootstrapFileReport[];
}

export function projectContext(
  input: SystemPromptInput,
  file: (path: string) => string | undefined,
): ProjectContext {
  const { config, runtime } = input;
  const mode = runtime.promptMode ?? "full";
  const injection = config.agents.defaults.contextInjection;
  if (injection === "never" || (injection === "continuation-skip" && runtime.continuation)) {
    return { text: undefined, reports: [] };
  }
  const perFile = config.agents.defaults.bootstrapMaxChars;
  let remaining = config.agents.defaults.bootstrapTotalMaxChars;
  const mainPrivate = runtime.mainPrivateSession === true;

  const reports: BootstrapFileReport[] = [];
  const blocks: string[] = [];
  let truncatedAny = false;
  let bootstrapPending = false;

  for (const { path, kind } of BOOTSTRAP_FILES) {
    // Sub-agents see only AGENTS.md, to keep their context small.
    if (mode === "minimal" && path !== "AGENTS.md") continue;
    if (kind === "memory" && !mainPrivate) continue;
    const content = file(path);

    if (content === undefined) {
      if (kind === "required") {
        reports.push({ path, status: "missing", rawChars: 0, injectedChars: 0 });
        blocks.push(`## ${path}\n\n[missing: ${path} is not in the workspace yet]`);
      }
      continue;
    }
    if (content.trim() === "") {
      reports.push({ path, status: "empty", rawChars: content.length, injectedChars: 0 });
      continue;
    }
    if (kind === "first-run") bootstrapPending = true;

    // USER.md has its own 4,000-char budget that does not draw on the shared total.
    const ownBudget = kind === "optional" ? Math.min(USER_FILE_MAX_CHARS, perFile) : perFile;
    const limit = kind === "optional" ? ownBudget : Math.min(ownBudget, remaining);
    if (limit < MIN_USEFUL_SLICE && content.length > limit) {
      truncatedAny = true;
      reports.push({
        path,
        status: "omitted",
        rawChars: content.length,
        injectedChars: 0,
        limitedBy: "max/total",
      });
      continue;
    }
    const body = content.length > limit ? truncateMiddle(content, limit, path) : content;
    if (kind !== "optional") remaining -= body.length;
    const truncated = body !== content;
    truncatedAny ||= truncated;
    reports.push({
      path,
      status: truncated ? "truncated" : "injected",
      rawChars: content.length,
      injectedChars: body.length,
      ...(truncated
        ? { limitedBy: limit < ownBudget ? ("max/total" as const) : ("max/file" as const) }
        : {}),
    });
    blocks.push(`## ${path}\n\n${body}`);
  }

  if (blocks.length === 0) return { text: undefined, reports };
  const head = [
    "# Project Context",
    "The following workspace files are loaded below (no need to read them again unless a note below says some were cut short).",
  ];
  if (blocks.some((block) => block.startsWith("## SOUL.md\n\n") && !block.includes("[missing:"))) {
    head.push(
      "SOUL.md defines your persona and tone: embody it unless a higher-priority instruction says otherwise.",
    );
  }
  if (bootstrapPending) {
    head.push(
      "BOOTSTRAP.md is pending: this is a brand-new workspace. Follow its first-run ritual with the user, record what you learn in IDENTITY.md, USER.md and SOUL.md, and when the ritual is complete empty BOOTSTRAP.md (write it with no content) so it is not loaded again.",
    );
  }
  const parts = [head.join("\n"), ...blocks];
  if (truncatedAny) {
    parts.push(
      "[Some workspace files above were truncated to fit the context budget. Read the affected files directly with `read` before relying on their full content.]",
    );
  }
  return { text: parts.join("\n\n"), reports };
}

/**
 * Cuts `text` to at most `limit` chars, keeping the head (70%) and the tail (20%) with a marker
 * between them, because instructions cluster at the top and recent notes at the bottom.
 */
export function truncateMiddle(text: string, limit: number, path: string): string {
  if (text.length <= limit) return text;
  const marker = `\n\n[… ${path} truncated: ${text.length} chars, only the start and end are shown; read the file for the rest …]\n\n`;
  const room = Math.max(0, limit - marker.length);
  const head = Math.floor(room * (7 / 9));
  const tail = room - head;
  if (room === 0) return text.slice(0, limit);
  return text.slice(0, head) + marker + (tail > 0 ? text.slice(text.length - tail) : "");
}
