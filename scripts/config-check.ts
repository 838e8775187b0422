/**
 * `npm run config:check`: validates the config file (and the workspace seed folders it names)
 * without building anything. Prints `config OK (<file>)` or the problems, one `<key.path>: <reason>`
 * line each, and exits 1.
 */
import { loadBundleInputs } from "./lib/bundle-inputs.ts";
import { reportConfigError } from "./lib/config-file.ts";

try {
  const inputs = loadBundleInputs();
  for (const warning of inputs.warnings) console.warn(`warning: ${warning}`);
  console.log(`config OK (${inputs.loaded.file ?? "no config file: defaults"})`);
} catch (error) {
  process.exitCode = reportConfigError(error);
}
