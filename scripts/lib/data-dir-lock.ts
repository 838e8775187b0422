import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * One `npm run dev` per data dir: PGlite and wrangler's persisted state both assume a single owner.
 * The lock names the owning pid, so a lock left by a killed process is recognised and taken over.
 */
export class DataDirLockedError extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(`${dataDir} is in use by another \`npm run dev\` (pid ${pid}); stop it, or set EDGECLAW_DATA_DIR to another folder`);
    this.name = "DataDirLockedError";
  }
}

export function lockDataDir(dataDir: string): () => void {
  const file = join(dataDir, "dev.lock");
  if (existsSync(file)) {
    const pid = Number.parseInt(readFileSync(file, "utf8"), 10);
    if (Number.isInteger(pid) && pid !== process.pid && isAlive(pid)) throw new DataDirLockedError(dataDir, pid);
  }
  writeFileSync(file, `${process.pid}\n`);
  return () => {
    if (existsSync(file) && readFileSync(file, "utf8").trim() === String(process.pid)) rmSync(file, { force: true });
  };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
