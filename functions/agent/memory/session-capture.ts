import type { DbEnv } from "../../db/client.ts";
import type { EdgeclawConfig } from "../../config/schema.ts";
import { wallClock } from "../../core/time-zone.ts";
import { resolveUserTimezone } from "../user-time.ts";
import { writeFile, WorkspaceError } from "../workspace.ts";
import { noteMemoryWrite } from "./index-signal.ts";

/**
 * The session-memory hook's job: when /new or /reset ends a session, its last user/assistant
 * messages are saved to `memory/YYYY-MM-DD-HHMM.md` (the user's time zone), so the next session can
 * find them with memory_search. The capture is taken when the command runs and written afterwards,
 * off the command's path.
 */

export interface CapturedMessage {
  role: "user" | "assistant";
  text: string;
}

export interface SessionCapture {
  sessionKey: string;
  sessionId: string;
  /** Why the session ended (`/new`, `/reset`). */
  reason: string;
  at: number;
  messages: CapturedMessage[];
  attempts?: number;
}

const MAX_MESSAGE_CHARS = 4000;

function localParts(at: Date, timeZone: string): { date: string; hhmm: string; clock: string } {
  const clock = wallClock(at.getTime(), timeZone);
  const pad = (value: number) => String(value).padStart(2, "0");
  return {
    date: `${clock.year}-${pad(clock.month)}-${pad(clock.day)}`,
    hhmm: `${pad(clock.hour)}${pad(clock.minute)}`,
    clock: `${pad(clock.hour)}:${pad(clock.minute)}`,
  };
}

/** The local calendar date (YYYY-MM-DD) of `at` in `timeZone`. */
export function localDate(at: Date, timeZone: string): string {
  return localParts(at, timeZone).date;
}

export function captureFileName(at: Date, timeZone: string): string {
  const { date, hhmm } = localParts(at, timeZone);
  return `memory/${date}-${hhmm}.md`;
}

export function renderCapture(capture: SessionCapture, timeZone: string): string {
  const { date, clock } = localParts(new Date(capture.at), timeZone);
  const lines = [
    `# Session: ${date} ${clock} (${timeZone})`,
    "",
    `- Session key: ${capture.sessionKey}`,
    `- Session id: ${capture.sessionId}`,
    `- Ended by: ${capture.reason}`,
    "",
    "## Conversation summary",
    "",
  ];
  for (const message of capture.messages) {
    const text =
      message.text.length > MAX_MESSAGE_CHARS
        ? `${message.text.slice(0, MAX_MESSAGE_CHARS)}…`
        : message.text;
    lines.push(`${message.role}: ${text.replace(/\r?\n/g, "\n  ")}`, "");
  }
  return lines.join("\n");
}

/**
 * Writes the capture as a new file (never over an existing note: a second reset in the same
 * minute gets `-2`, `-3`, …) and schedules the reindex. Returns the path written.
 */
export async function writeSessionCapture(
  env: DbEnv & Record<string, unknown>,
  config: EdgeclawConfig,
  agentId: string,
  capture: SessionCapture,
): Promise<string> {
  const zone = resolveUserTimezone(config);
  const base = captureFileName(new Date(capture.at), zone).replace(/\.md$/, "");
  const content = renderCapture(capture, zone);
  for (let n = 1; n <= 20; n++) {
    const path = n === 1 ? `${base}.md` : `${base}-${n}.md`;
    try {
      await writeFile(env, agentId, path, content, { expectedVersion: 0 });
      await noteMemoryWrite(env, config, agentId, path);
      return path;
    } catch (error) {
      if (!(error instanceof WorkspaceError && error.code === "version_conflict")) throw error;
    }
  }
  throw new Error(`no free file name for the session capture under ${base}`);
}
