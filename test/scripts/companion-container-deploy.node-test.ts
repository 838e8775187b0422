import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { parseConfig } from "../../functions/channels/gateway-config.ts";
import {
  companionContainerPlan,
  companionContainerSecrets,
  deployWranglerToml,
} from "../../scripts/lib/deploy-config.ts";
import { stripAnsi } from "../../scripts/lib/wrangler.ts";
import { assertDockerfileCoversBundle } from "./dockerfile-bundle.ts";
import { projectRoot, tempProject, tsxCli } from "./helpers.ts";

/** A config with one socket account (Telegram long polling) and the key that speaks for it. */
function socketConfig(container: Record<string, unknown>): Record<string, unknown> {
  return {
    companion: {
      ingressKeys: [
        {
          id: "k1",
          secret: { source: "env", id: "EDGECLAW_COMPANION_INGRESS_SECRET" },
          channels: ["telegram"],
        },
      ],
      container,
    },
    channels: {
      telegram: { mode: "polling", botToken: { source: "env", id: "TELEGRAM_BOT_TOKEN" } },
    },
  };
}

function run(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, {
      cwd: projectRoot,
      env: { ...process.env, WRANGLER_SEND_METRICS: "false", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.once("exit", (code) => resolve({ code, output: stripAnsi(output) }));
  });
}

describe("companion container in the deploy config", () => {
  it("adds nothing without socket accounts (dev, tests and CI need no Docker)", () => {
    assert.equal(companionContainerPlan(parseConfig({}), projectRoot), undefined);
  });

  it('without a container the deploy still says so (EDGECLAW_COMPANION_CONTAINER = "0"), so one a previous deploy started is stopped', () => {
    const toml = deployWranglerToml(
      readFileSync(join(projectRoot, "wrangler.toml"), "utf8"),
      undefined,
    );
    assert.match(toml, /\n\[vars\]\nEDGECLAW_COMPANION_CONTAINER = "0"\n/);
    assert.doesNotMatch(toml, /^\[\[containers\]\]|^\[triggers\]/m);
  });

  it("adds nothing when the companion runs on a Docker host of its own (companion.container.enabled: false)", () => {
    assert.ok(companionContainerPlan(parseConfig(socketConfig({})), projectRoot));
    assert.equal(
      companionContainerPlan(parseConfig(socketConfig({ enabled: false })), projectRoot),
      undefined,
    );
  });

  it("npx edgeclaw deploy --dry-run: wrangler accepts the generated [[containers]] entry, its cron and var, with no unknown key", async () => {
    const dir = tempProject({
      "edgeclaw.json5": JSON.stringify(
        socketConfig({
          image: "registry.cloudflare.com/example/edgeclaw-companion:0.1.0",
          instanceType: "basic",
          workerUrl: "https://edgeclaw.example.workers.dev",
        }),
      ),
    });
    const { code, output } = await run(
      [tsxCli, join(projectRoot, "scripts", "deploy.ts"), "--dry-run", "--skip-migrations"],
      { EDGECLAW_CONFIG: join(dir, "edgeclaw.json5") },
    );
    assert.equal(code, 0, output);
    assert.match(
      output,
      /companion container for k1 \(basic, image registry\.cloudflare\.com\/example\/edgeclaw-companion:0\.1\.0\)/,
    );
    assert.match(output, /env\.COMPANION_CONTAINER \(CompanionContainerDO\)\s+Durable Object/);
    assert.match(output, /env\.EDGECLAW_COMPANION_CONTAINER \("1"\)/);
    assert.match(
      output,
      /The following containers are available:\s*\n- edgeclaw-companioncontainerdo \(registry\.cloudflare\.com\/example\/edgeclaw-companion:0\.1\.0\)/,
    );
    // wrangler only warns about a misspelt key; here any config warning is a failure.
    assert.doesNotMatch(output, /Unexpected fields|WARNING[^\n]*configuration/, output);
    assert.deepEqual(
      readdirSync(projectRoot).filter((name) =>
        /^wrangler\.deploy-\d+\.generated\.toml$/.test(name),
      ),
      [],
      "the generated config is removed",
    );
    assert.match(
      output,
      /npx wrangler secret put EDGECLAW_COMPANION_OUTBOUND_SECRET\s+# handed to the companion container/,
    );
  });

  it("lists the Worker secrets the container's environment is built from, the companion-only ones included", () => {
    const config = socketConfig({});
    (config.channels as Record<string, unknown>).slack = {
      mode: "socket",
      botToken: { source: "env", id: "SLACK_BOT_TOKEN" },
      appToken: { source: "env", id: "SLACK_APP_TOKEN" },
    };
    (
      config.companion as { ingressKeys: Array<{ channels: string[] }> }
    ).ingressKeys[0]!.channels.push("slack");
    assert.deepEqual(companionContainerSecrets(parseConfig(config)).sort(), [
      "EDGECLAW_COMPANION_INGRESS_SECRET",
      "EDGECLAW_COMPANION_OUTBOUND_SECRET",
      "SLACK_APP_TOKEN",
      "TELEGRAM_BOT_TOKEN",
    ]);
    assert.deepEqual(companionContainerSecrets(parseConfig({})), []);
  });

  it("a Dockerfile image builds from the project root, where everything the Dockerfile copies exists", async () => {
    const plan = companionContainerPlan(parseConfig(socketConfig({})), projectRoot);
    assert.ok(plan);
    assert.deepEqual(
      {
        image: plan.image,
        imageIsDockerfile: plan.imageIsDockerfile,
        instanceType: plan.instanceType,
        deployments: plan.deployments,
      },
      {
        image: "./companion/Dockerfile",
        imageIsDockerfile: true,
        instanceType: "lite",
        deployments: ["k1"],
      },
    );
    const toml = deployWranglerToml(readFileSync(join(projectRoot, "wrangler.toml"), "utf8"), plan);
    assert.match(
      toml,
      /\[\[containers\]\]\nclass_name = "CompanionContainerDO"\nimage = "\.\/companion\/Dockerfile"\nimage_build_context = "\."\nmax_instances = 1\ninstance_type = "lite"/,
    );
    // Every file the companion bundle is built from is copied (the sandbox host's wire protocol
    // and functions/http were not, and the image would not have built).
    await assertDockerfileCoversBundle("companion/Dockerfile", "companion/src/main.ts", ["ws"]);
  });

  it("the binding the container attaches to is in wrangler.toml with its migration, so removing the container never needs a migration", () => {
    const toml = readFileSync(join(projectRoot, "wrangler.toml"), "utf8");
    assert.match(toml, /name = "COMPANION_CONTAINER"\nclass_name = "CompanionContainerDO"/);
    assert.match(toml, /new_sqlite_classes = \["CompanionContainerDO"\]/);
    assert.doesNotMatch(toml, /^\[\[containers\]\]/m);
  });
});
