import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseEnv } from "node:util";
import { after, describe, it } from "node:test";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { freePort } from "../../scripts/lib/local-ports.ts";
import { withNeonPool } from "../../scripts/lib/neon-node.ts";
import {
  startFakeSlackApi,
  type FakeSlackApi,
} from "../../functions/channels/slack/simulate/slack-api.ts";
import { killStartedDevs, startDev, stopDev } from "./dev-process.ts";
import { projectRoot } from "./helpers.ts";

/**
 * The control page in headless Chromium against the local stack `npm run dev` starts (workerd +
 * PGlite), with Slack pointed at the loopback fake: a stranger's DM makes a pairing request that
 * the page approves; the approved sender's answer bounces (channel_not_found, scripted once) into
 * a dead letter that the page retries, and it arrives once; the session is found by search and
 * reset; a sub-agent the demo model spawns is listed under the session (status, label, run time,
 * cost); a cron job is disabled and run (its "Last run" shown); a budget cap is raised; the
 * channel card shows its last event and a webhook URL that wraps only after its separators; the
 * companion (a Discord account served by a companion this test does not start) is a readable
 * table, not JSON. Every view is opened at 1280 px and at 390 px (no sideways scrolling on a phone,
 * every tab on screen) and screenshotted into test-output/control-page/.
 * Chromium missing is a failure, not a skip: `.ci/run` installs it.
 */
const CHROMIUM = "/usr/bin/chromium";
const SCREENSHOTS = join(projectRoot, "test-output", "control-page");
const TOKEN = "control-page-test-token-0123456789";
const SIGNING_SECRET = "control-page-signing-secret";
const AUTH_PROFILE_KEY = "sk-ant-control-page-work-key-0123456789";
const VIEWS = [
  "sessions",
  "pairing",
  "dead-letters",
  "cron",
  "spend",
  "budgets",
  "channels",
  "config",
  "auth-profiles",
  "sandbox",
  "environments",
];

const cleanups: Array<() => Promise<void> | void> = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await Promise.resolve(cleanup()).catch(() => undefined);
  killStartedDevs(); // a stack that never got ready (no cleanup registered for it)
});

/** A Slack DM as Slack's Events API posts it, signed with the app's signing secret. */
async function slackDm(base: string, user: string, channel: string, text: string): Promise<void> {
  const ts = `${Math.floor(Date.now() / 1000)}.${String(Math.floor(Math.random() * 1e6)).padStart(6, "0")}`;
  const body = JSON.stringify({
    type: "event_callback",
    team_id: "TCTL",
    api_app_id: "ACTL",
    event_id: `Ev${Math.random().toString(36).slice(2, 12)}`,
    event_time: Math.floor(Date.now() / 1000),
    event: { type: "message", channel_type: "im", channel, user, text, ts },
  });
  const timestamp = String(Math.floor(Date.now() / 1000));
  const signature = `v0=${createHmac("sha256", SIGNING_SECRET).update(`v0:${timestamp}:${body}`).digest("hex")}`;
  const response = await fetch(`${base}/slack/events`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-slack-request-timestamp": timestamp,
      "x-slack-signature": signature,
    },
    body,
  });
  assert.equal(response.status, 200, await response.text());
}

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

async function until<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 30_000,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function slackMessages(
  slack: FakeSlackApi,
  channel: string,
): Promise<Array<{ text: string }>> {
  return (await (
    await fetch(`${slack.url}/_control/messages?channel=${channel}`)
  ).json()) as Array<{ text: string }>;
}

async function open(page: Page, base: string, view: string): Promise<void> {
  await page.goto(`${base}/control#${view}`);
  await page.locator("main h2").first().waitFor();
  await page.locator("main >> text=Loading…").waitFor({ state: "detached" });
}

/** Every view at both widths: a screenshot each, and no sideways scrolling on a phone. */
async function screenshotAll(page: Page, base: string, suffix: string): Promise<void> {
  for (const [width, height] of [
    [1280, 900],
    [390, 844],
  ] as const) {
    await page.setViewportSize({ width, height });
    for (const view of VIEWS) {
      await open(page, base, view);
      await page.evaluate(() => void (document.getElementById("toast")!.hidden = true));
      await page.screenshot({
        path: join(SCREENSHOTS, `${view}-${width}${suffix}.png`),
        fullPage: true,
      });
      if (width === 390) {
        const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
        assert.ok(
          scrollWidth <= 390,
          `${view} at 390 px scrolls sideways (${scrollWidth} px wide)`,
        );
        // Every tab reachable without a hidden sideways scroll, the active one among them.
        const tabs = await page.evaluate(() => {
          const nav = document.getElementById("nav")!;
          const off = [...nav.querySelectorAll("a")]
            .filter((a) => {
              const box = a.getBoundingClientRect();
              return box.width === 0 || box.left < 0 || box.right > window.innerWidth;
            })
            .map((a) => a.textContent);
          return {
            off,
            hidden: nav.scrollWidth - nav.clientWidth,
            on: nav.querySelector("a.on")?.getAttribute("data-view"),
          };
        });
        assert.deepEqual(tabs.off, [], `${view} at 390 px: tabs off screen`);
        assert.ok(
          tabs.hidden <= 0,
          `${view} at 390 px: the tabs scroll sideways by ${tabs.hidden} px`,
        );
        assert.equal(tabs.on, view);
      }
    }
  }
}

describe("control page (headless Chromium)", () => {
  it("signs in with the token, approves pairing, retries a dead letter once, resets a session, drives cron and budgets; every view at 1280 and 390 px", {
    timeout: 300_000,
  }, async () => {
    assert.ok(
      existsSync(CHROMIUM),
      `Chromium is missing at ${CHROMIUM}: install it (apt-get install -y chromium; .ci/run does)`,
    );
    rmSync(SCREENSHOTS, { recursive: true, force: true });
    mkdirSync(SCREENSHOTS, { recursive: true });

    const slack = await startFakeSlackApi();
    cleanups.push(() => slack.stop());
    const work = mkdtempSync(join(tmpdir(), "edgeclaw-control-"));
    cleanups.push(() => rmSync(work, { recursive: true, force: true }));
    const configFile = join(work, "edgeclaw.json5");
    writeFileSync(
      configFile,
      JSON.stringify({
        gateway: { auth: { token: TOKEN } },
        channels: {
          slack: {
            enabled: true,
            mode: "http",
            apiBaseUrl: `${slack.url}/api/`,
            botToken: "xoxb-control-test",
            signingSecret: SIGNING_SECRET,
            streaming: { mode: "off" },
          },
          discord: { enabled: true, token: { source: "env", id: "DISCORD_BOT_TOKEN" } },
        },
        companion: {
          ingressKeys: [
            {
              id: "control-test",
              secret: { source: "env", id: "EDGECLAW_COMPANION_INGRESS_SECRET" },
              channels: ["discord"],
            },
          ],
        },
        budgets: { global: { day: { usd: 5 } } },
        // Two Anthropic keys as auth profiles: one secret set, one not (the Auth profiles view).
        auth: { profiles: { "anthropic:work": {}, "anthropic:spare": {} } },
      }),
    );
    const dataDir = join(work, "data");
    const dev = await startDev(
      dataDir,
      await freePort(),
      {
        EDGECLAW_CONFIG: configFile,
        EDGECLAW_FAKE_MODEL: "1",
        ANTHROPIC_API_KEY: "",
        OPENAI_API_KEY: "",
        EDGECLAW_GATEWAY_TOKEN: "",
        // The companion is not started: /admin/companion/status reports the deployment as not reported yet.
        EDGECLAW_DEV_COMPANION: "0",
        DISCORD_BOT_TOKEN: "MTEwMDAwMDAwMDAwMDAwMDAwMQ.Gctl.control-page-token",
        EDGECLAW_COMPANION_INGRESS_SECRET: "control-page-companion-secret",
        ANTHROPIC_API_KEY_WORK: AUTH_PROFILE_KEY,
      },
      180_000,
    );
    cleanups.push(() => stopDev(dev));
    const base = dev.url;
    const vars = parseEnv(readFileSync(join(dataDir, "dev-secrets.env"), "utf8"));

    // Spend to chart: metered model calls as the SessionDO mirror writes them.
    await withNeonPool(vars.DATABASE_URL!, vars.EDGECLAW_PG_WS_PROXY, async (pool) => {
      for (const [i, agent, channel, usd] of [
        [0, "main", "slack", 0.42],
        [1, "main", "webchat", 0.13],
        [1, "ops", "slack", 0.8],
        [3, "main", "slack", 0.25],
      ] as const) {
        await pool.query(
          `insert into model_calls (id, session_key, session_id, agent_id, channel, kind, provider, model, input_tokens, output_tokens, cost_usd, created_at)
           values ($1, 'agent:main:seed', 's', $2, $3, 'turn', 'anthropic', 'claude', 1000, 200, $4, now() - ($5 || ' days')::interval)`,
          [`seed-${i}-${agent}-${channel}`, agent, channel, usd, String(i)],
        );
      }
    });
    // A cron job to drive.
    await admin(base, "POST", "/cron", {
      name: "daily digest",
      schedule: { kind: "every", every: "1h" },
      sessionTarget: "main",
      payload: { kind: "systemEvent", text: "digest time" },
    });

    // A fresh profile (Playwright's --user-data-dir) and the flags this machine needs offline.
    const browser: BrowserContext = await chromium.launchPersistentContext(
      join(work, "chromium-profile"),
      {
        executablePath: CHROMIUM,
        headless: true,
        args: [
          "--headless",
          "--no-sandbox",
          "--disable-gpu",
          "--disable-quic",
          "--no-first-run",
          "--disable-background-networking",
          "--disable-component-update",
          "--disable-sync",
        ],
        viewport: { width: 1280, height: 900 },
      },
    );
    cleanups.push(() => browser.close());
    const page = browser.pages()[0] ?? (await browser.newPage());
    page.on("dialog", (dialog) => void dialog.accept());
    const pageErrors: string[] = [];
    page.on("pageerror", (error) => pageErrors.push(error.message));

    // Sign in: a wrong token is refused; the right one is kept in sessionStorage, never in the URL.
    await page.goto(`${base}/control`);
    await page.fill("#token-input", "wrong-token");
    await page.click("#login button[type=submit]");
    await page.locator("#login-error", { hasText: "not accepted" }).waitFor();
    await page.fill("#token-input", TOKEN);
    await page.click("#login button[type=submit]");
    await page.locator("main h2", { hasText: "Sessions" }).waitFor();
    assert.equal(
      await page.evaluate(() => sessionStorage.getItem("edgeclaw.control.token")),
      TOKEN,
    );
    assert.ok(!page.url().includes(TOKEN));

    // Pairing: a stranger writes; the page approves the request.
    const stranger = "USTRANGER1";
    const dm = "DSTRANGER1";
    await slackDm(base, stranger, dm, "hi, may I talk to the agent?");
    await until("the pairing request", async () =>
      (await admin<{ requests: unknown[] }>(base, "GET", "/pairing")).requests.length
        ? true
        : undefined,
    );
    await open(page, base, "pairing");
    await page.screenshot({
      path: join(SCREENSHOTS, "pairing-before-approve.png"),
      fullPage: true,
    });
    await page.click("button[data-action=approve]");
    await page.locator("#toast", { hasText: `Approved ${stranger}` }).waitFor();
    await page.locator("main", { hasText: "No pending pairing requests." }).waitFor();
    const allow = await admin<{ entries: Array<{ senderId: string }> }>(
      base,
      "GET",
      "/allowlist/slack",
    );
    assert.ok(
      allow.entries.some((entry) => entry.senderId === stranger),
      "approved sender is on the allowlist",
    );

    // A dead letter: the answer to the approved sender bounces once (channel_not_found is permanent).
    const before = (await slackMessages(slack, dm)).length;
    await fetch(`${slack.url}/_control/script`, {
      method: "POST",
      body: JSON.stringify({
        method: "chat.postMessage",
        channel: dm,
        error: "channel_not_found",
        times: 1,
      }),
    });
    await slackDm(base, stranger, dm, "hello after approval");
    await until("the dead letter", async () =>
      (await admin<{ sessions: unknown[] }>(base, "GET", "/dead-letters")).sessions.length
        ? true
        : undefined,
    );
    assert.equal(
      (await slackMessages(slack, dm)).length,
      before,
      "nothing delivered while the answer is dead",
    );
    await open(page, base, "dead-letters");
    await page.locator("[data-dead-letter]", { hasText: "channel_not_found" }).waitFor();
    await page.screenshot({
      path: join(SCREENSHOTS, "dead-letters-before-retry.png"),
      fullPage: true,
    });
    await page.click("[data-dead-letter] button[data-action=retry]");
    await page.locator("main", { hasText: "Nothing was given up on." }).waitFor();
    const delivered = await until("the retried answer", async () => {
      const messages = await slackMessages(slack, dm);
      return messages.length > before ? messages : undefined;
    });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    assert.equal(
      (await slackMessages(slack, dm)).length,
      before + 1,
      "the retried answer arrives once",
    );
    assert.ok(delivered.at(-1)!.text.length > 0);

    // Sessions: search by the sender's DM channel, open the transcript, reset.
    await open(page, base, "sessions");
    await page.fill("input[type=search]", dm);
    await page.click("main form button[type=submit]");
    await page.locator("main tbody tr").first().waitFor();
    assert.equal(await page.locator("main tbody tr").count(), 1);
    await page.click("main tbody tr");
    await page.locator("[data-list=transcript]", { hasText: "hello after approval" }).waitFor();
    const oldId = await page.locator("[data-field=session-id]").textContent();
    await page.screenshot({ path: join(SCREENSHOTS, "session-transcript.png"), fullPage: true });
    await page.click("button[data-action=reset]");
    await page.locator("#toast", { hasText: "Session reset" }).waitFor();
    await page
      .locator("[data-list=transcript]", { hasText: "Nothing in this session yet" })
      .waitFor();
    assert.notEqual(await page.locator("[data-field=session-id]").textContent(), oldId);

    // Sub-agents: the sender asks for a helper (the demo model spawns one); once its report is
    // answered, the session view lists it with status, label, run time and cost.
    const beforeSpawn = (await slackMessages(slack, dm)).length;
    await slackDm(base, stranger, dm, "spawn a sub-agent to check the weather");
    await until(
      "the spawn's answer and the report's",
      async () => ((await slackMessages(slack, dm)).length >= beforeSpawn + 2 ? true : undefined),
      60_000,
    );
    const [dmSession] = (
      await admin<{ sessions: Array<{ sessionKey: string }> }>(base, "GET", `/sessions?q=${dm}`)
    ).sessions;
    const spawned = await admin<{ subagents: Array<{ label?: string; state: string }> }>(
      base,
      "GET",
      `/sessions/${encodeURIComponent(dmSession!.sessionKey)}/subagents`,
    );
    assert.ok(
      spawned.subagents.some((child) => child.label === "demo helper" && child.state === "ended"),
      `the demo helper ended: ${JSON.stringify(spawned)}; the DM got ${JSON.stringify((await slackMessages(slack, dm)).slice(beforeSpawn).map((m) => m.text))}`,
    );
    // The page still shows this session from the reset: leave it, so the detail loads afresh.
    await open(page, base, "sessions");
    await open(page, base, `sessions/${encodeURIComponent(dmSession!.sessionKey)}`);
    const helper = page.locator("main tbody tr", { hasText: "demo helper" });
    await helper.waitFor().catch(async (error: unknown) => {
      throw new Error(
        `${error}; the page shows: ${await page.locator("main").textContent()}; errors: ${pageErrors.join(" | ")}`,
      );
    });
    assert.equal(await helper.locator("[data-field=status]").textContent(), "completed");
    assert.match((await helper.locator("[data-field=runtime]").textContent()) ?? "", /^\d+ s$/);
    assert.match((await helper.locator("[data-field=cost]").textContent()) ?? "", /^\$\d/);
    await page.screenshot({ path: join(SCREENSHOTS, "session-subagents.png"), fullPage: true });

    // Cron: disable, enable, run now.
    await open(page, base, "cron");
    await page.click("button[data-action=toggle]");
    await page.locator("#toast", { hasText: "Disabled daily digest" }).waitFor();
    await page.locator("button[data-action=toggle]", { hasText: "Enable" }).waitFor();
    const jobs = await admin<{ jobs: Array<{ enabled: boolean }> }>(base, "GET", "/cron");
    assert.equal(jobs.jobs[0]!.enabled, false);
    await page.click("button[data-action=toggle]");
    await page.locator("button[data-action=toggle]", { hasText: "Disable" }).waitFor();
    await page.click("button[data-action=run-now]");
    await page.locator("#toast", { hasText: "Started daily digest" }).waitFor();
    const lastRun = page.locator("main td[data-label='Last run']").first();
    await until("the manual run in Last run", async () => {
      await open(page, base, "cron");
      return (await lastRun.textContent()) !== "never" ? true : undefined;
    });

    // Budgets: raise the global day cap.
    await open(page, base, "budgets");
    await page.fill("[data-scope=global] [data-period=day] input", "12");
    await page.click("[data-scope=global] [data-period=day] button[data-action=raise]");
    await page.locator("#toast", { hasText: "Raised the day cap of global" }).waitFor();
    await page.locator("[data-scope=global] .badge", { hasText: "raised" }).waitFor();
    const budgets = await admin<{
      scopes: Array<{ scope: string; windows: Array<{ limitUsd?: number }> }>;
    }>(base, "GET", "/budgets");
    assert.equal(budgets.scopes.find((s) => s.scope === "global")!.windows[0]!.limitUsd, 12);

    // Auth profiles: names and secret names, whether each is set, never the key.
    await open(page, base, "auth-profiles");
    const anthropic = page.locator("[data-provider=anthropic]");
    const profilesText = (await anthropic.textContent()) ?? "";
    assert.match(profilesText, /anthropic:work.*ANTHROPIC_API_KEY_WORK.*ready/);
    assert.match(profilesText, /anthropic:spare.*ANTHROPIC_API_KEY_SPARE \(not set\).*no key set/);
    assert.ok(!(await page.content()).includes(AUTH_PROFILE_KEY), "the key reached the page");

    // Spend charts, channel status, config check.
    await open(page, base, "spend");
    assert.equal(await page.locator("svg.chart").count(), 2);
    assert.ok((await page.locator("svg.chart rect").count()) >= 4);
    await open(page, base, "channels");
    const slackCard = page.locator("[data-channel='slack:default']");
    assert.equal(
      await slackCard.locator("[data-field=webhook-url]").textContent(),
      `${base}/slack/events`,
    );
    // Events were accepted (the DMs above): the card says when the last one came.
    const lastEvent = (await slackCard.locator("[data-field=last-event]").textContent()) ?? "";
    assert.ok(!Number.isNaN(Date.parse(lastEvent)) || /\d{1,2}:\d{2}/.test(lastEvent), lastEvent);
    // The companion as a readable table: deployment and note as labelled lines, no JSON dump.
    const companion = page.locator("[data-field=companion]");
    await companion.locator("dl.kv dt", { hasText: "Deployment" }).waitFor();
    assert.equal(await companion.locator("pre").count(), 0);
    assert.match((await companion.textContent()) ?? "", /no companion has reported yet/);
    // The webhook URL at phone width: it may wrap, but only after a separator.
    await page.setViewportSize({ width: 390, height: 844 });
    const url = await page.evaluate(() => {
      const code = document.querySelector(
        "[data-channel='slack:default'] [data-field=webhook-url]",
      )!;
      const parts = [...code.childNodes].filter((node) => node.nodeType === Node.TEXT_NODE);
      const broken = parts.filter((node) => {
        const range = document.createRange();
        range.selectNodeContents(node);
        return range.getClientRects().length > 1;
      });
      return {
        breaks: code.querySelectorAll("wbr").length,
        broken: broken.map((n) => n.textContent),
      };
    });
    assert.ok(url.breaks >= 2, "break opportunities after the URL's separators");
    assert.deepEqual(url.broken, [], "no part of the URL is broken inside");
    await page.setViewportSize({ width: 1280, height: 900 });
    await open(page, base, "config");
    await page.locator("[data-field=config-ok]", { hasText: "Config OK" }).waitFor();

    await screenshotAll(page, base, "");
    assert.deepEqual(pageErrors, []);
    console.log(`control page screenshots: ${SCREENSHOTS}`);
  });
});
