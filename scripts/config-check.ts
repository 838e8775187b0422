/**
 * `npm run config:check`: validates the config file (and the workspace seed folders it names)
 * without building anything. Prints `config OK (<file>)` or the problems, one `<key.path>: <reason>`
 * line each, and exits 1. Enabled channel accounts this Worker would not serve, or whose
 * credentials are not set in `.dev.vars` / the shell, are warnings (a deployed Worker reads its own
 * secrets: `npx edgeclaw config check` asks it).
 */
import { resolve } from "node:path";
import {
  describeMissing,
  missingCredentials,
  notServedLines,
} from "../functions/channels/credential-check.ts";
import { loadBundleInputs } from "./lib/bundle-inputs.ts";
import { reportConfigError } from "./lib/config-file.ts";
import { readDevVarsFile } from "./lib/dev-vars.ts";

try {
  const inputs = loadBundleInputs();
  // As dev hands them to the Worker: .dev.vars, then the shell's non-empty values over it.
  const shell = Object.entries(process.env).filter(
    (entry): entry is [string, string] => !!entry[1],
  );
  const env = { ...readDevVarsFile(resolve(".dev.vars")), ...Object.fromEntries(shell) };
  const missing = missingCredentials(inputs.loaded.config, env).map(describeMissing);
  for (const warning of [...inputs.warnings, ...notServedLines(inputs.loaded.config), ...missing])
    console.warn(`warning: ${warning}`);
  if (missing.length)
    console.warn(
      "  (looked up in .dev.vars and this shell; a deployed Worker reads its own secrets: `npx edgeclaw config check` asks it)",
    );
  console.log(`config OK (${inputs.loaded.file ?? "no config file: defaults"})`);
} catch (error) {
  process.exitCode = reportConfigError(error);
}
