/**
 * `npm run build`: bundles the Worker exactly as a deploy would (`wrangler deploy --dry-run`), with
 * the config and workspace seed defined in, into dist/. Offline, and fine without an edgeclaw.json5
 * (CI builds the defaults).
 */
import { loadBundleInputs } from "./lib/bundle-inputs.ts";
import { reportConfigError } from "./lib/config-file.ts";
import { runWrangler, uploadSizeLine } from "./lib/wrangler.ts";

const OUT_DIR = "dist";

async function main(): Promise<number> {
  let inputs;
  try {
    inputs = loadBundleInputs();
  } catch (error) {
    return reportConfigError(error);
  }
  for (const warning of inputs.warnings) console.warn(`warning: ${warning}`);
  console.log(`edgeclaw build: ${inputs.summary}`);

  const run = await runWrangler(["deploy", "--dry-run", "--outdir", OUT_DIR, ...inputs.defineArgs]);
  if (run.code !== 0) {
    process.stderr.write(run.output);
    console.error(`edgeclaw build: wrangler failed (exit ${run.code})`);
    return run.code;
  }
  console.log(
    `edgeclaw build: ${OUT_DIR}/ — ${uploadSizeLine(run.output) ?? "size not reported by wrangler"}`,
  );
  return 0;
}

process.exitCode = await main();
