/**
 * `npm run deploy`: validate the config, apply the database migrations to DATABASE_URL (Neon) over
 * the same driver the Worker uses, deploy the Worker with the config and workspace bundled in, and
 * tell the user which Worker secrets it still needs.
 *
 *   DATABASE_URL=postgres://… npm run deploy
 *   npm run deploy -- --skip-migrations      (database already migrated, or migrated elsewhere)
 *   npm run deploy -- --dry-run              (bundle only; says which migrations a deploy would
 *                                             apply, changes nothing)
 */
import { loadBundleInputs, type BundleInputs } from "./lib/bundle-inputs.ts";
import { reportConfigError } from "./lib/config-file.ts";
import { describeDatabaseError } from "./lib/database-error.ts";
import { migrateDatabase, pendingMigrations, redactDatabaseUrl } from "./lib/migrate-neon.ts";
import { databaseUrlProblem } from "./lib/neon-node.ts";
import { requiredSecrets } from "../functions/control/required-secrets.ts";
import { runWrangler, uploadSizeLine } from "./lib/wrangler.ts";
import {
  companionContainerPlan,
  companionContainerSecrets,
  sandboxContainerPlan,
  writeDeployConfig,
} from "./lib/deploy-config.ts";

const args = new Set(process.argv.slice(2));
const skipMigrations = args.has("--skip-migrations");
const dryRun = args.has("--dry-run");

async function main(): Promise<number> {
  let inputs: BundleInputs;
  try {
    inputs = loadBundleInputs();
  } catch (error) {
    return reportConfigError(error);
  }
  for (const warning of inputs.warnings) console.warn(`warning: ${warning}`);
  console.log(`edgeclaw deploy: ${inputs.summary}`);

  if (!skipMigrations) {
    const databaseUrl = process.env.DATABASE_URL;
    const wsProxy = process.env.EDGECLAW_PG_WS_PROXY || undefined;
    const problem = databaseUrl ? databaseUrlProblem(databaseUrl) : undefined;
    if (problem) {
      console.error(`edgeclaw deploy: ${problem}`);
      return 1;
    }
    if (dryRun) {
      // A dry run changes nothing anywhere: it only says what a deploy would apply.
      if (!databaseUrl)
        console.log(
          "edgeclaw deploy: dry run: DATABASE_URL is not set, so pending migrations were not checked",
        );
      else {
        try {
          const { applied, pending } = await pendingMigrations(databaseUrl, { wsProxy });
          console.log(
            `edgeclaw deploy: dry run: ${redactDatabaseUrl(databaseUrl)} has ${applied} migration${applied === 1 ? "" : "s"}; ` +
              (pending.length ? `a deploy would apply ${pending.join(", ")}` : "nothing to apply"),
          );
        } catch (error) {
          console.warn(
            `edgeclaw deploy: dry run: cannot read ${redactDatabaseUrl(databaseUrl)}: ${describeDatabaseError(error)}`,
          );
        }
      }
    } else if (!databaseUrl) {
      console.error(
        "edgeclaw deploy: DATABASE_URL is not set. Export your Neon connection string (Neon console → Connect, " +
          "e.g. postgres://user:pass@ep-….neon.tech/neondb?sslmode=require) so the migrations can be applied, " +
          "or pass --skip-migrations.",
      );
      return 1;
    } else {
      console.log(`edgeclaw deploy: migrating ${redactDatabaseUrl(databaseUrl)} …`);
      try {
        const outcome = await migrateDatabase(databaseUrl, { wsProxy });
        const applied = outcome.after - outcome.before;
        console.log(
          `edgeclaw deploy: database up to date (${applied} migration${applied === 1 ? "" : "s"} applied, ${outcome.after} total)`,
        );
      } catch (error) {
        console.error(`edgeclaw deploy: migration failed: ${describeDatabaseError(error)}`);
        return 1;
      }
    }
  }

  // Socket accounts configured → the companion runs as a Cloudflare Container (docs/concepts/companion.md).
  const container = companionContainerPlan(inputs.loaded.config, process.cwd());
  // An agent's sandbox backend is "container" → the sandbox image too (docs/concepts/sandbox.md).
  const sandbox = sandboxContainerPlan(inputs.loaded.config, process.cwd());
  const generated = writeDeployConfig(process.cwd(), container, sandbox);
  if (sandbox)
    console.log(
      `edgeclaw deploy: sandbox container for ${sandbox.agents.join(", ")} (${sandbox.instanceType}, at most ${sandbox.maxInstances} at once, image ${sandbox.image}` +
        `${sandbox.imageIsDockerfile ? ", built by wrangler: needs a running Docker engine" : ""})`,
    );
  if (container) {
    console.log(
      `edgeclaw deploy: companion container for ${container.deployments.join(", ")} (${container.instanceType}, image ${container.image}` +
        `${container.imageIsDockerfile ? ", built by wrangler: needs a running Docker engine" : ""})`,
    );
    if (!container.workerUrl)
      console.warn(
        "warning: companion.container.workerUrl is not set: the container is not started until it names this Worker's URL (printed below)",
      );
  }
  const wranglerArgs = [
    "deploy",
    "--config",
    generated.path,
    ...inputs.defineArgs,
    ...(dryRun ? ["--dry-run", "--outdir", "dist"] : []),
  ];
  let run;
  try {
    run = await runWrangler(wranglerArgs, { echo: true });
  } finally {
    generated.remove();
  }
  if (run.code !== 0) {
    console.error(
      `edgeclaw deploy: wrangler deploy failed (exit ${run.code}); if it asked you to log in, run \`npx wrangler login\` first`,
    );
    if (container?.imageIsDockerfile && /Docker/i.test(run.output)) {
      console.error(
        "edgeclaw deploy: the companion image is a Dockerfile, which wrangler builds with Docker; start Docker, or push the image once and set companion.container.image to it",
      );
    }
    if (sandbox?.imageIsDockerfile && /Docker/i.test(run.output)) {
      console.error(
        "edgeclaw deploy: the sandbox image is a Dockerfile (sandbox/Dockerfile), which wrangler builds with Docker; start Docker, or push the image once and set agents.defaults.sandbox.docker.image to it",
      );
    }
    return run.code;
  }
  const size = uploadSizeLine(run.output);
  if (size) console.log(`edgeclaw deploy: ${size}`);

  const secrets = requiredSecrets(inputs.loaded.config, inputs.loaded.raw);
  if (container) {
    for (const name of companionContainerSecrets(inputs.loaded.config)) {
      if (!secrets.some((secret) => secret.name === name))
        secrets.push({ name, why: "handed to the companion container" });
    }
  }
  console.log(
    "\nWorker secrets this deployment reads (set each once; `wrangler secret put` prompts for the value):",
  );
  for (const secret of secrets)
    console.log(`  npx wrangler secret put ${secret.name.padEnd(24)} # ${secret.why}`);
  const url = /https:\/\/\S+\.workers\.dev\S*/.exec(run.output)?.[0];
  if (url) {
    console.log(`\nLive at ${url}`);
    console.log(`  health:   ${url}/health`);
    console.log(`  web chat: ${url}/`);
  }
  return 0;
}

process.exitCode = await main();
