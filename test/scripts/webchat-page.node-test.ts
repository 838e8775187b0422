import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { chromium, type Page } from "playwright-core";
import { freePort } from "../../scripts/lib/local-ports.ts";
import { killStartedDevs, startDev, stopDev } from "./dev-process.ts";
import { projectRoot } from "./helpers.ts";

/**
 * The web chat in headless Chromium against `npm run dev` with the demo model (which answers with
 * the user's words, so an attacker's text comes back as the model's answer): Markdown is rendered
 * as elements holding text, and `<img onerror>`, `<script>` and a `javascript:` link in the answer
 * stay inert text; a message sent while the agent is answering is queued and sent after that
 * answer; a message queued when the page is reloaded is sent after the reload, once; the model
 * label stays after a reload. Screenshots at 390 px go to test-output/webchat/.
 */
const CHROMIUM = "/usr/bin/chromium";
const SCREENSHOTS = join(projectRoot, "test-output", "webchat");
const TOKEN = "webchat-page-test-token-0123456789";
const DEMO_MODEL = "fake/edgeclaw-demo";
const ATTACK = [
  "**bold** and `code`",
  "",
  "- one",
  "- two",
  "",
  '<img src=x onerror="window.__pwned=1"> <script>window.__pwned=2</script> [click me](javascript:window.__pwned=3) [safe](https://example.com/x)',
].join("\n");

const cleanups: Array<() => Promise<void> | void> = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await Promise.resolve(cleanup()).catch(() => undefined);
  killStartedDevs();
});

async function say(page: Page, text: string): Promise<void> {
  await page.fill("#input", text);
  await page.press("#input", "Enter");
}

function answer(page: Page, words: string) {
  return page.locator(".msg.assistant", { hasText: `You said: ${words}` });
}

describe("web chat (headless Chromium)", () => {
  it("renders Markdown inertly, queues while thinking, keeps the queue and the model label across a reload", {
    timeout: 300_000,
  }, async () => {
    assert.ok(
      existsSync(CHROMIUM),
      `Chromium is missing at ${CHROMIUM}: apt-get install -y chromium`,
    );
    rmSync(SCREENSHOTS, { recursive: true, force: true });
    mkdirSync(SCREENSHOTS, { recursive: true });
    const work = mkdtempSync(join(tmpdir(), "edgeclaw-webchat-"));
    cleanups.push(() => rmSync(work, { recursive: true, force: true }));
    const configFile = join(work, "edgeclaw.json5");
    writeFileSync(configFile, JSON.stringify({ gateway: { auth: { token: TOKEN } } }));
    const dev = await startDev(
      join(work, "data"),
      await freePort(),
      {
        EDGECLAW_CONFIG: configFile,
        EDGECLAW_FAKE_MODEL: "1",
        ANTHROPIC_API_KEY: "",
        OPENAI_API_KEY: "",
        EDGECLAW_GATEWAY_TOKEN: "",
        EDGECLAW_DEV_COMPANION: "0",
      },
      180_000,
    );
    cleanups.push(() => stopDev(dev));

    const browser = await chromium.launchPersistentContext(join(work, "chromium-profile"), {
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
      viewport: { width: 390, height: 844 },
    });
    cleanups.push(() => browser.close());
    const page = browser.pages()[0] ?? (await browser.newPage());
    const pageErrors: string[] = [];
    page.on("pageerror", (error) => pageErrors.push(error.message));
    page.on("dialog", (dialog) => {
      pageErrors.push(`dialog: ${dialog.message()}`);
      void dialog.dismiss();
    });
    // Every chat request the page makes, in order; `holdMs` keeps the next one "thinking" longer.
    const sent: Array<{ text: string; key: string; at: number }> = [];
    let holdMs = 0;
    await page.route("**/v1/chat/completions", async (route) => {
      const body = JSON.parse(route.request().postData() ?? "{}") as {
        messages: Array<{ content: string }>;
      };
      sent.push({
        text: body.messages.at(-1)!.content,
        key: route.request().headers()["idempotency-key"]!,
        at: Date.now(),
      });
      const hold = holdMs;
      holdMs = 0;
      if (hold) await new Promise((resolve) => setTimeout(resolve, hold));
      await route.continue().catch(() => undefined); // the page may have reloaded meanwhile
    });

    await page.goto(`${dev.url}/#token=${TOKEN}`);
    await page.locator(".note", { hasText: "New conversation" }).waitFor();

    // Markdown from the model, attacker's markup included.
    await say(page, ATTACK);
    const attacked = answer(page, "");
    await attacked.locator(".model", { hasText: DEMO_MODEL }).waitFor();
    assert.equal(await attacked.locator(".md strong").textContent(), "bold");
    assert.equal(await attacked.locator(".md code").textContent(), "code");
    assert.equal(await attacked.locator(".md li").count(), 2);
    assert.equal(await page.locator("main img, main script, main iframe").count(), 0);
    assert.equal(await page.locator('main a[href^="javascript"]').count(), 0);
    assert.equal(await attacked.locator('a[href="https://example.com/x"]').count(), 1);
    const shown = (await attacked.textContent()) ?? "";
    assert.ok(shown.includes('<img src=x onerror="window.__pwned=1">'), shown);
    assert.ok(shown.includes("<script>window.__pwned=2</script>"), shown);
    await attacked.getByText("click me").click();
    await page.waitForTimeout(300);
    assert.equal(await page.evaluate(() => (window as { __pwned?: number }).__pwned), undefined);
    await page.screenshot({ path: join(SCREENSHOTS, "markdown-390.png"), fullPage: true });

    // A second message while the first is still being answered: queued, sent after the answer.
    holdMs = 3_000;
    await say(page, "first question");
    await page.locator(".msg.user", { hasText: "first question" }).waitFor();
    await say(page, "second question");
    const queued = page.locator(".msg.user.queued", { hasText: "second question" });
    await queued.waitFor();
    await page.screenshot({ path: join(SCREENSHOTS, "queued-390.png"), fullPage: true });
    assert.deepEqual(
      sent.slice(1).map((request) => request.text),
      ["first question"],
      "the queued message waits",
    );
    await answer(page, "second question").locator(".model").waitFor();
    assert.deepEqual(
      sent.slice(1).map((request) => request.text),
      ["first question", "second question"],
    );
    assert.ok(sent[2]!.at - sent[1]!.at >= 3_000, "sent only after the first answer");
    assert.equal(await queued.count(), 0);
    const firstAnswer = await page.locator(".msg.assistant").nth(1).textContent();
    assert.ok(firstAnswer?.includes("You said: first question"), firstAnswer ?? "");

    // A reload while one message is held on the way and another is queued: both arrive, once.
    holdMs = 60_000;
    await say(page, "third question");
    await page.locator(".msg.user", { hasText: "third question" }).waitFor();
    await say(page, "fourth question");
    await page.locator(".msg.user.queued", { hasText: "fourth question" }).waitFor();
    const thirdKey = sent.at(-1)!.key;
    await page.reload();
    await answer(page, "fourth question").locator(".model").waitFor({ timeout: 60_000 });
    await answer(page, "third question").waitFor();
    assert.equal(sent.filter((request) => request.text === "third question").length, 2);
    assert.ok(sent.filter((request) => request.key === thirdKey).length === 2, "same key again");

    // After another reload: the history, each answer once, Markdown and model label kept.
    await page.reload();
    await answer(page, "fourth question").waitFor();
    for (const words of ["first question", "second question", "third question", "fourth question"])
      assert.equal(await answer(page, words).count(), 1, words);
    assert.equal(await page.locator(".msg.assistant .model").count(), 5);
    for (const label of await page.locator(".msg.assistant .model").allTextContents())
      assert.equal(label, DEMO_MODEL);
    assert.equal(await page.locator(".msg.assistant .md strong").first().textContent(), "bold");
    assert.equal(await page.locator("main img, main script").count(), 0);
    assert.equal(await page.evaluate(() => localStorage.getItem("edgeclaw.webchat.queue")), null);
    const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(scrollWidth <= 390, `the chat scrolls sideways at 390 px (${scrollWidth} px)`);
    await page.screenshot({ path: join(SCREENSHOTS, "reloaded-390.png"), fullPage: true });
    assert.deepEqual(pageErrors, []);
  });
});
