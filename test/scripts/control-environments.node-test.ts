import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { freePort } from "../../scripts/lib/local-ports.ts";
import { makeCondaRoot } from "../fakes/conda/root.ts";
import { killStartedDevs, startDev, stopDev } from "./dev-process.ts";
import { projectRoot } from "./helpers.ts";

/**
 * The control page's Environments view in headless Chromium against `npm run dev` with an agent
 * whose sandbox is the companion (bubblewrap) and whose computing environment is the conda
 * stand-in (test/fakes/conda/, its acaclaw env as the image has it) bound at its own path
 * (EDGECLAW_SANDBOX_CONDA_PREFIX). Two installs that conflict with acaclaw leave two "create a new
 * env?" questions; the page shows the env with its packages, R not installed, both questions and
 * the history; Create makes acaclaw-gpu with the description typed on the page, Decline closes the
 * other, Install R puts conda R into acaclaw — each checked in the stand-in's own `conda list`, not
 * only on the page. Screenshots at 1280 and 390 px into test-output/control-environments/.
 */
const CHROMIUM = "/usr/bin/chromium";
const SCREENSHOTS = join(projectRoot, "test-output", "control-environments");
const TOKEN = "control-env-test-token-0123456789";

const cleanups: Array<() => Promise<void> | void> = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await Promise.resolve(cleanup()).catch(() => undefined);
  killStartedDevs();
});

async function admin<T>(base: string, method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${base}/admin${path}`, {
    method,
    headers: {
      authorization: `Bearer ${TOKEN}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  assert.ok(response.ok, `${method} ${path}: ${response.status} ${text}`);
  return JSON.parse(text) as T;
}

function condaList(root: string, env: string): Record<string, string> {
  const list = JSON.parse(
    execFileSync(join(root, "bin", "conda"), ["list", "-n", env, "--json"], { encoding: "utf8" }),
  ) as Array<{ name: string; version: string }>;
  return Object.fromEntries(list.map((p) => [p.name, p.version]));
}

async function open(page: Page, base: string): Promise<void> {
  await page.goto(`${base}/control#environments`);
  await page.locator("main h2", { hasText: "Environments" }).waitFor();
  await page.locator("main >> text=Loading…").waitFor({ state: "detached", timeout: 60_000 });
}

describe("control page: Environments (headless Chromium)", () => {
  it("shows envs, packages, R, questions and history; Create, Decline and Install R change the envs", {
    timeout: 300_000,
  }, async () => {
    assert.ok(existsSync(CHROMIUM), `Chromium is missing at ${CHROMIUM}: .ci/run installs it`);
    rmSync(SCREENSHOTS, { recursive: true, force: true });
    mkdirSync(SCREENSHOTS, { recursive: true });
    const root = makeCondaRoot();
    cleanups.push(() => rmSync(root, { recursive: true, force: true }));
    const work = mkdtempSync(join(tmpdir(), "edgeclaw-control-env-"));
    cleanups.push(() => rmSync(work, { recursive: true, force: true }));
    const configFile = join(work, "edgeclaw.json5");
    writeFileSync(
      configFile,
      JSON.stringify({
        gateway: { auth: { token: TOKEN } },
        agents: {
          defaults: {
            sandbox: { backend: "companion", mode: "all" },
            computeEnv: {
              enabled: true,
              condaPrefix: root,
              channels: [`file://${root}/channel`],
            },
          },
        },
      }),
    );
    const dev = await startDev(
      join(work, "data"),
      await freePort(),
      {
        EDGECLAW_CONFIG: configFile,
        EDGECLAW_FAKE_MODEL: "1",
        ANTHROPIC_API_KEY: "",
        OPENAI_API_KEY: "",
        EDGECLAW_GATEWAY_TOKEN: "",
        EDGECLAW_COMPANION_OUTBOUND_SECRET: "",
        EDGECLAW_SANDBOX_CONDA_PREFIX: root,
      },
      180_000,
    );
    cleanups.push(() => stopDev(dev));
    const base = dev.url;

    // The cascade, as the CLI drives it: seaborn fits acaclaw; pytorch-cuda and jax conflict with it.
    type Install = { install: { id: string; status: string } };
    const seaborn = await admin<Install>(base, "POST", "/env/install", { packages: ["seaborn"] });
    assert.equal(seaborn.install.status, "installed", JSON.stringify(seaborn));
    const gpu = await admin<Install>(base, "POST", "/env/install", {
      packages: ["pytorch", "pytorch-cuda=12.4"],
    });
    assert.equal(gpu.install.status, "needs-new-env");
    const jax = await admin<Install>(base, "POST", "/env/install", { packages: ["jax", "jaxlib"] });
    assert.equal(jax.install.status, "needs-new-env");

    const browser: BrowserContext = await chromium.launchPersistentContext(
      join(work, "chromium-profile"),
      {
        executablePath: CHROMIUM,
        headless: true,
        args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"],
        viewport: { width: 1280, height: 900 },
      },
    );
    cleanups.push(() => browser.close());
    const page = browser.pages()[0] ?? (await browser.newPage());
    const pageErrors: string[] = [];
    page.on("pageerror", (error) => pageErrors.push(error.message));
    await page.goto(`${base}/control`);
    await page.fill("#token-input", TOKEN);
    await page.click("#login button[type=submit]");
    await page.locator("main h2").first().waitFor();
    await open(page, base);

    const acaclaw = page.locator('[data-env="acaclaw"]');
    await acaclaw.waitFor();
    assert.match((await acaclaw.textContent()) ?? "", /primary/);
    assert.match((await acaclaw.textContent()) ?? "", /Python 3\.12\.8/);
    await acaclaw.locator("summary").click();
    await acaclaw.locator("td", { hasText: "seaborn" }).waitFor();
    assert.match(
      (await page.locator('[data-field="r-status"]').textContent()) ?? "",
      /R not installed/,
    );
    const questions = page.locator("[data-question]");
    assert.equal(await questions.count(), 2);
    const gpuQuestion = page.locator(`[data-question="${gpu.install.id}"]`);
    assert.match(
      (await gpuQuestion.textContent()) ?? "",
      /pytorch pytorch-cuda=12\.4 conflicts with every env/,
    );
    assert.match((await gpuQuestion.textContent()) ?? "", /acaclaw-gpu/);
    // The reason names what clashes, not the solver's headline.
    assert.match(
      (await gpuQuestion.textContent()) ?? "",
      /conflicts with acaclaw: Package numpy conflicts for numpy=1\.26 .*pytorch=2\.5\.1 -> numpy\[version='>=2\.0'\]/,
    );
    const history = (await page.locator('[data-list="env-installs"]').textContent()) ?? "";
    assert.match(history, /seaborn[\s\S]*installed/);
    assert.match(history, /needs-new-env/);
    for (const [width, height] of [
      [1280, 900],
      [390, 844],
    ] as const) {
      await page.setViewportSize({ width, height });
      await page.screenshot({ path: join(SCREENSHOTS, `questions-${width}.png`), fullPage: true });
      if (width === 390) {
        const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
        assert.ok(
          scrollWidth <= 390,
          `Environments at 390 px scrolls sideways (${scrollWidth} px)`,
        );
      }
    }
    await page.setViewportSize({ width: 1280, height: 900 });

    // Create the GPU env with a description typed here.
    await gpuQuestion
      .locator('[data-field="env-description"]')
      .fill("GPU computing (PyTorch, CUDA)");
    await gpuQuestion.locator('[data-action="create-env"]').click();
    await page.locator('[data-env="acaclaw-gpu"]').waitFor({ timeout: 60_000 });
    assert.match(
      (await page.locator('[data-env="acaclaw-gpu"]').textContent()) ?? "",
      /GPU computing \(PyTorch, CUDA\)/,
    );
    assert.equal(condaList(root, "acaclaw-gpu").pytorch, "2.5.1");
    // Decline the JAX question: it leaves the list, no env is made.
    await page.locator(`[data-question="${jax.install.id}"] [data-action="decline-env"]`).click();
    await page.locator("[data-question]").first().waitFor({ state: "detached" });
    assert.ok(!existsSync(join(root, "envs", "acaclaw-jax")));
    // Install R into the primary env.
    await page.locator('[data-action="install-r"]').click();
    await page.locator('[data-field="r-status"]', { hasText: "in conda env acaclaw" }).waitFor({
      timeout: 60_000,
    });
    assert.equal(condaList(root, "acaclaw")["r-base"], "4.4.1");

    const status = await admin<{
      manifest: { environments: Record<string, { description: string; createdReason?: string }> };
      questions: unknown[];
      installs: Array<{ id: string; status: string }>;
    }>(base, "GET", "/env");
    assert.equal(
      status.manifest.environments["acaclaw-gpu"]?.description,
      "GPU computing (PyTorch, CUDA)",
    );
    assert.match(
      status.manifest.environments["acaclaw-gpu"]?.createdReason ?? "",
      /conflicts with acaclaw/,
    );
    assert.deepEqual(status.questions, []);
    assert.equal(status.installs.find((i) => i.id === gpu.install.id)?.status, "answered");
    assert.equal(status.installs.find((i) => i.id === jax.install.id)?.status, "declined");
    const after = (await page.locator('[data-list="env-installs"]').textContent()) ?? "";
    assert.match(after, /created/);
    assert.match(after, /declined/);
    await page.screenshot({ path: join(SCREENSHOTS, "after-1280.png"), fullPage: true });
    assert.deepEqual(pageErrors, []);
  });
});
