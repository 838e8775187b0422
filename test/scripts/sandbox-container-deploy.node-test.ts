import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { parseConfig } from "../../functions/channels/gateway-config.ts";
import {
  companionContainerPlan,
  deployWranglerToml,
  sandboxContainerPlan,
} from "../../scripts/lib/deploy-config.ts";
import { stripAnsi } from "../../scripts/lib/wrangler.ts";
import { assertDockerfileCoversBundle } from "./dockerfile-bundle.ts";
import { projectRoot, tempProject, tsxCli } from "./helpers.ts";

/**
 * The sandbox container in `npx edgeclaw deploy`: added exactly when an agent's sandbox backend is
 * "container", with the image, instance type and cap of agents.defaults.sandbox, and a var that
 * tells the Worker it exists. The image itself is not built here (no Docker engine): what can be
 * checked without one is that everything sandbox/Dockerfile copies exists and covers every source
 * file its bundle is built from, and that wrangler accepts the generated entry.
 */
const baseToml = () => readFileSync(join(projectRoot, "wrangler.toml"), "utf8");

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

describe("sandbox container in the deploy config", () => {
  it("is added only when an agent's sandbox backend is container", () => {
    assert.equal(sandboxContainerPlan(parseConfig({}), projectRoot), undefined);
    const companion = { agents: { defaults: { sandbox: { backend: "companion" } } } };
    assert.equal(sandboxContainerPlan(parseConfig(companion), projectRoot), undefined);
    const perAgent = {
      agents: {
        list: [{ id: "main" }, { id: "builder", sandbox: { backend: "container" } }],
      },
    };
    assert.deepEqual(sandboxContainerPlan(parseConfig(perAgent), projectRoot), {
      agents: ["builder"],
      image: "./sandbox/Dockerfile",
      imageIsDockerfile: true,
      instanceType: "basic",
      maxInstances: 10,
    });
    const defaults = {
      agents: {
        defaults: {
          sandbox: {
            backend: "container",
            container: { instanceType: "standard-1", maxInstances: 3 },
          },
        },
      },
    };
    assert.deepEqual(sandboxContainerPlan(parseConfig(defaults), projectRoot), {
      agents: ["agents.defaults"],
      image: "./sandbox/Dockerfile",
      imageIsDockerfile: true,
      instanceType: "standard-1",
      maxInstances: 3,
    });
  });

  it('says whether it exists (EDGECLAW_SANDBOX_CONTAINER "1"/"0") and sits beside the companion container', () => {
    assert.match(deployWranglerToml(baseToml(), undefined), /EDGECLAW_SANDBOX_CONTAINER = "0"/);
    const sandbox = sandboxContainerPlan(
      parseConfig({ agents: { defaults: { sandbox: { backend: "container" } } } }),
      projectRoot,
    );
    const companion = companionContainerPlan(
      parseConfig({
        companion: {
          ingressKeys: [{ id: "k1", secret: { source: "env", id: "K1" }, channels: ["telegram"] }],
        },
        channels: { telegram: { mode: "polling", botToken: { source: "env", id: "TG" } } },
      }),
      projectRoot,
    );
    const toml = deployWranglerToml(baseToml(), companion, sandbox);
    assert.match(toml, /EDGECLAW_COMPANION_CONTAINER = "1"\nEDGECLAW_SANDBOX_CONTAINER = "1"/);
    assert.match(
      toml,
      /\[\[containers\]\]\nclass_name = "SandboxDO"\nimage = "\.\/sandbox\/Dockerfile"\nimage_build_context = "\."\nmax_instances = 10\ninstance_type = "basic"/,
    );
    assert.equal(toml.match(/^\[\[containers\]\]$/gm)?.length, 2);
    assert.throws(
      () =>
        deployWranglerToml(`${baseToml()}\n[[containers]]\nclass_name = "X"\n`, undefined, sandbox),
      /merge the companion and sandbox containers' entries by hand/,
    );
  });

  it("the binding is in wrangler.toml with its migration, so the container comes and goes without one", () => {
    const toml = baseToml();
    assert.match(toml, /name = "SANDBOX"\nclass_name = "SandboxDO"/);
    assert.match(toml, /new_sqlite_classes = \["SandboxDO"\]/);
  });

  it("sandbox/Dockerfile copies every source file its host bundle is built from", async () => {
    const dockerfile = readFileSync(join(projectRoot, "sandbox", "Dockerfile"), "utf8");
    const entry = /npx esbuild (\S+)/.exec(dockerfile)?.[1];
    assert.equal(entry, "companion/src/sandbox/container-main.ts");
    await assertDockerfileCoversBundle("sandbox/Dockerfile", entry);
    assert.match(dockerfile, /npm ci -w companion/);
    assert.match(dockerfile, /^USER sandbox$/m);
    assert.match(dockerfile, /EDGECLAW_SANDBOX_WORKSPACE=\/workspace/);
  });

  it("npx edgeclaw deploy --dry-run: wrangler accepts the generated sandbox entry and var", async () => {
    const dir = tempProject({
      "edgeclaw.json5": JSON.stringify({
        agents: {
          defaults: {
            sandbox: {
              backend: "container",
              docker: { image: "registry.cloudflare.com/example/edgeclaw-sandbox:0.1.0" },
            },
          },
        },
      }),
    });
    const { code, output } = await run(
      [tsxCli, join(projectRoot, "scripts", "deploy.ts"), "--dry-run", "--skip-migrations"],
      { EDGECLAW_CONFIG: join(dir, "edgeclaw.json5") },
    );
    assert.equal(code, 0, output);
    assert.match(
      output,
      /sandbox container for agents\.defaults \(basic, at most 10 at once, image registry\.cloudflare\.com\/example\/edgeclaw-sandbox:0\.1\.0\)/,
    );
    assert.match(output, /env\.SANDBOX \(SandboxDO\)\s+Durable Object/);
    assert.match(output, /env\.EDGECLAW_SANDBOX_CONTAINER \("1"\)/);
    assert.match(
      output,
      /- edgeclaw-sandboxdo \(registry\.cloudflare\.com\/example\/edgeclaw-sandbox:0\.1\.0\)/,
    );
    assert.doesNotMatch(output, /Unexpected fields|WARNING[^\n]*configuration/, output);
  });
});
