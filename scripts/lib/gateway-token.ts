import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { resolveSecret } from "../../functions/config/secret-ref.ts";
import type { EdgeclawConfig } from "../../functions/config/schema.ts";

export type GatewayAuthForDev =
  | { kind: "none" }
  | { kind: "password"; source: string }
  | { kind: "configured"; source: string }
  | { kind: "generated"; token: string; file: string; reused: boolean };

/** File under the data dir that keeps the generated local token across restarts. */
export const GENERATED_TOKEN_FILE = "gateway-token";

/**
 * How the local gateway authenticates, in the order the Worker resolves it: `gateway.auth.mode`
 * "none" turns auth off; otherwise `gateway.auth.token` (SecretInput), then EDGECLAW_GATEWAY_TOKEN,
 * then OPENCLAW_GATEWAY_TOKEN. When none of them yields a token, dev makes one (kept in the data
 * dir, reused on the next start) so the web chat and API work out of the box.
 */
export function gatewayAuthForDev(
  config: EdgeclawConfig,
  vars: Record<string, string>,
  dataDir: string,
): GatewayAuthForDev {
  const auth = config.gateway.auth;
  if (auth.mode === "none") return { kind: "none" };
  if (auth.mode === "password" && resolveSecret(auth.password, vars))
    return { kind: "password", source: describeSource(auth.password) };
  if (resolveSecret(auth.token, vars))
    return { kind: "configured", source: describeSource(auth.token) };
  for (const name of ["EDGECLAW_GATEWAY_TOKEN", "OPENCLAW_GATEWAY_TOKEN"]) {
    if (vars[name]) return { kind: "configured", source: name };
  }
  const file = join(dataDir, GENERATED_TOKEN_FILE);
  if (existsSync(file)) {
    const token = readFileSync(file, "utf8").trim();
    if (token) return { kind: "generated", token, file, reused: true };
  }
  const token = randomBytes(24).toString("base64url");
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  return { kind: "generated", token, file, reused: false };
}

function describeSource(input: EdgeclawConfig["gateway"]["auth"]["token"]): string {
  if (input === undefined) return "the config";
  if (typeof input === "string") {
    const whole = /^\$\{([A-Z0-9_]+)\}$/.exec(input);
    return whole ? whole[1]! : "the config file";
  }
  return input.id;
}
