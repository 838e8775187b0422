import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { CommandSpec } from "./command-spec.ts";

const DEPLOY_SCRIPT = fileURLToPath(new URL("../deploy.ts", import.meta.url));

/**
 * `edgeclaw deploy [--dry-run] [--skip-migrations]`: exactly `npm run deploy` (scripts/deploy.ts,
 * in this directory, with this environment: DATABASE_URL, EDGECLAW_CONFIG, wrangler's login), so
 * the README's `npx edgeclaw deploy` and `npm run deploy` can never differ. Its own process, so
 * wrangler's prompts and output reach the terminal as they are; its exit code is ours.
 */
export const DEPLOY_COMMAND: CommandSpec = {
  name: "deploy",
  args: [],
  options: { "dry-run": "flag", "skip-migrations": "flag" },
  offline: true,
  summary:
    "validate the config, migrate DATABASE_URL, deploy the Worker (= npm run deploy; --dry-run changes nothing)",
  run({ options }) {
    const flags = ["dry-run", "skip-migrations"].filter((flag) => options[flag] === true);
    return new Promise((resolve, reject) => {
      const child = spawn(
        process.execPath,
        // tsx as this project has it, whatever directory the command runs in.
        [
          "--import",
          import.meta.resolve("tsx"),
          DEPLOY_SCRIPT,
          ...flags.map((flag) => `--${flag}`),
        ],
        { stdio: "inherit", env: process.env },
      );
      child.once("error", reject);
      child.once("exit", (code, signal) => resolve(code ?? (signal ? 1 : 0)));
    });
  },
};
