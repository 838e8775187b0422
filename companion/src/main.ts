import { settingsFromEnv } from "./settings.ts";
import { Companion, type Log } from "./companion.ts";
import { connectorSource } from "./connectors/index.ts";

/**
 * Entry point: `node dist/main.js` in the image, `node --import tsx companion/src/main.ts` locally
 * (`npm run dev` starts it when a socket account is configured). Logs are JSON lines; SIGTERM and
 * SIGINT stop it gracefully (connectors, bounded outbox drain, lease release).
 */
const log: Log = (level, message, fields) => {
  if (level === "debug" && !process.env.EDGECLAW_COMPANION_DEBUG) return;
  const line = JSON.stringify({ at: new Date().toISOString(), level, message, ...fields });
  (level === "error" || level === "warn" ? process.stderr : process.stdout).write(`${line}\n`);
};

const companion = new Companion(settingsFromEnv(process.env), connectorSource(), process.env, log);
await companion.start();

let stopping = false;
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    log("info", `${signal}: stopping`);
    void companion.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        log("error", "stop failed", {
          error: error instanceof Error ? error.message : String(error),
        });
        process.exit(1);
      },
    );
  });
}
