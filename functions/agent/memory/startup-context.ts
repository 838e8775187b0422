import { and, asc, eq, like } from "drizzle-orm";
import { withDb, type DbEnv } from "../../db/client.ts";
import { workspaceFiles } from "../../db/schema.ts";
import type { EdgeclawConfig } from "../../config/schema.ts";
import { resolveUserTimezone } from "../user-time.ts";
import { localDate } from "./session-capture.ts";

/**
 * The startup context after /new or /reset: today's and yesterday's daily notes
 * (`memory/YYYY-MM-DD.md` and the slugged `memory/YYYY-MM-DD-*.md` the session-memory hook
 * writes), in the user's time zone, bounded by the bootstrap budgets. Callers load it only in the
 * owner's main private session, because memory/ is private memory.
 */

export interface StartupNote {
  path: string;
  content: string;
}

export async function loadStartupNotes(
  env: DbEnv,
  config: EdgeclawConfig,
  agentId: string,
  now: Date,
): Promise<StartupNote[]> {
  const zone = resolveUserTimezone(config);
  const days = [localDate(new Date(now.getTime() - 86_400_000), zone), localDate(now, zone)];
  const rows = await withDb(env, (db) =>
    Promise.all(
      days.map((day) =>
        db
          .select({ path: workspaceFiles.path, content: workspaceFiles.content })
          .from(workspaceFiles)
          .where(
            and(
              eq(workspaceFiles.agentId, agentId),
              like(workspaceFiles.path, `memory/${day}%.md`),
            ),
          )
          .orderBy(asc(workspaceFiles.path)),
      ),
    ),
  );
  const dated = /^memory\/\d{4}-\d{2}-\d{2}(-[^/]+)?\.md$/;
  return rows.flat().filter((row) => dated.test(row.path));
}

/** The notes as one prompt section, each file and the whole cut to the bootstrap budgets. */
export function renderStartupContext(
  notes: readonly StartupNote[],
  config: EdgeclawConfig,
): string | undefined {
  if (!notes.length) return undefined;
  const perFile = config.agents.defaults.bootstrapMaxChars;
  let budget = config.agents.defaults.bootstrapTotalMaxChars;
  const blocks: string[] = [];
  for (const note of notes) {
    if (budget <= 0) {
      blocks.push(
        `### ${note.path}\n[omitted: startup context budget used up; read it with memory_get]`,
      );
      continue;
    }
    const limit = Math.min(perFile, budget);
    const body =
      note.content.length > limit
        ? `${note.content.slice(0, limit)}\n[… ${note.content.length - limit} more characters: read ${note.path} with memory_get]`
        : note.content;
    budget -= Math.min(note.content.length, limit);
    blocks.push(`### ${note.path}\n${body.trim()}`);
  }
  return [
    "## Startup Context",
    "This session was just started with /new or /reset. Your daily notes from yesterday and today, for continuity:",
    ...blocks,
  ].join("\n\n");
}
