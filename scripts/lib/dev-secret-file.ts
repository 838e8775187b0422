import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * A secret dev makes once and keeps in the data dir (mode 600), so every restart signs with the
 * same one: the companion's ingress key and its sandbox outbound key both come from here.
 */
export function generatedSecret(
  dataDir: string,
  fileName: string,
): { secret: string; file: string } {
  const file = join(dataDir, fileName);
  if (existsSync(file)) {
    const secret = readFileSync(file, "utf8").trim();
    if (secret) return { secret, file };
  }
  const secret = randomBytes(32).toString("base64url");
  writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  return { secret, file };
}
