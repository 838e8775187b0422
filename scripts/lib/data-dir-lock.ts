import { readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as z from "zod";
import {
  isSameLiveProcess,
  processesHoldingDir,
  processInfo,
  type DataDirHolder,
} from "./process-table.ts";

/**
 * One `npm run dev` per data dir: PGlite and wrangler's persisted state both assume a single owner.
 * The lock file names its owner by pid AND start time, so neither a zombie nor a later process that
 * got the same pid keeps a dead owner's lock alive. It also carries what the CLI needs to find the
 * running stack (URL, where the generated token is), so it doubles as the dev state file.
 */
export const LOCK_FILE = "dev.lock";

const devStateSchema = z.object({
  pid: z.number().int(),
  startTime: z.string().optional(),
  /** Process group of the wrangler dev serves through (workerd shares it). */
  wranglerPgid: z.number().int().optional(),
  /** Set once the stack answers /health. */
  url: z.string().optional(),
  /** The generated gateway token's file, when the stack uses one. */
  tokenFile: z.string().optional(),
});
export type DevState = z.infer<typeof devStateSchema>;

export class DataDirLockedError extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(
      `${dataDir} is in use by another \`npm run dev\` (pid ${pid}); stop it, or set EDGECLAW_DATA_DIR to another folder`,
    );
    this.name = "DataDirLockedError";
  }
}

/** Processes an earlier run left behind (its parent was killed) still use the data dir. */
export class DataDirHeldError extends Error {
  constructor(
    readonly dataDir: string,
    readonly holders: DataDirHolder[],
  ) {
    super(
      `${dataDir} is still used by processes an earlier \`npm run dev\` left behind:\n` +
        holders.map((h) => `  pid ${h.pid} (process group ${h.pgid}): ${h.command}`).join("\n") +
        `\nstop them (kill ${holders.map((h) => h.pid).join(" ")}) and start again, or set EDGECLAW_DATA_DIR to another folder`,
    );
    this.name = "DataDirHeldError";
  }
}

export interface DataDirLock {
  /** Adds to what the lock file tells others (the CLI) about this run. */
  publish(update: Omit<Partial<DevState>, "pid" | "startTime">): void;
  release(): void;
}

export function lockDataDir(dataDir: string): DataDirLock {
  const file = join(dataDir, LOCK_FILE);
  let state: DevState = { pid: process.pid, startTime: processInfo(process.pid)?.startTime };
  let staleGroups: number[] = [];
  // Two tries: the second follows removing a dead owner's lock; losing that race to another start
  // means the other start owns the dir now.
  for (let attempt = 0; ; attempt++) {
    try {
      writeFileSync(file, JSON.stringify(state), { flag: "wx" });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const owner = readLock(file);
    if (owner && owner.pid !== process.pid && isSameLiveProcess(owner.pid, owner.startTime))
      throw new DataDirLockedError(dataDir, owner.pid);
    if (attempt > 0) throw new DataDirLockedError(dataDir, owner?.pid ?? 0);
    if (owner?.wranglerPgid !== undefined) staleGroups = [owner.wranglerPgid];
    rmSync(file, { force: true });
  }
  const release = () => {
    if (readLock(file)?.pid === process.pid) rmSync(file, { force: true });
  };
  const holders = processesHoldingDir(dataDir, staleGroups);
  if (holders.length > 0) {
    release();
    throw new DataDirHeldError(dataDir, holders);
  }
  return {
    publish(update) {
      state = { ...state, ...update };
      const temp = `${file}.${process.pid}.tmp`;
      writeFileSync(temp, JSON.stringify(state));
      renameSync(temp, file);
    },
    release,
  };
}

/** The state of the `npm run dev` that owns `dataDir`, if one is running. */
export function readLiveDevState(dataDir: string): DevState | undefined {
  const state = readLock(join(dataDir, LOCK_FILE));
  return state && isSameLiveProcess(state.pid, state.startTime) ? state : undefined;
}

function readLock(file: string): DevState | undefined {
  let text: string;
  try {
    text = readFileSync(file, "utf8").trim();
  } catch {
    return undefined;
  }
  // Locks written before the state file was JSON hold a bare pid.
  if (/^\d+$/.test(text)) return { pid: Number(text) };
  try {
    const parsed = devStateSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
