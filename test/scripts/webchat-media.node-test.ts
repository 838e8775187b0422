import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { chromium, type Page } from "playwright-core";
import { freePort } from "../../scripts/lib/local-ports.ts";
import { killStartedDevs, startDev, stopDev } from "./dev-process.ts";
import { projectRoot } from "./helpers.ts";

/**
 * The web chat's media in headless Chromium against `npm run dev` with the demo model (it echoes
 * the user's words, and `write <path>: <text>` makes it call the write tool). The agent's files
 * (its `MEDIA:` lines) are shown after the answer from signed links to the Worker's media route:
 * an SVG from the workspace as an image that loads, a Markdown file as a download link, and the
 * `MEDIA:` lines themselves are not shown. An image the operator attaches goes as an `image_url`
 * part and shows in the message; after a reload the history shows both again, with fresh links.
 * A screenshot at 390 px goes to test-output/webchat/.
 */
const CHROMIUM = "/usr/bin/chromium";
const SCREENSHOTS = join(projectRoot, "test-output", "webchat");
const TOKEN = "webchat-media-test-token-0123456789";
const SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"><rect width="40" height="20" fill="#c33"/></svg>';
// A real 4×4 PNG (test/fixtures/media/images.ts).
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAQAAAAECAIAAAAmkwkpAAAAEElEQVR4nGP4z8AARwzEcQCukw/x0F8jngAAAABJRU5ErkJggg==",
  "base64",
);

const cleanups: Array<() => Promise<void> | void> = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await Promise.resolve(cleanup()).catch(() => undefined);
  killStartedDevs();
});

async function say(page: Page, text: string): Promise<void> {
  await page.fill("#input", text);
  await page.press("#input", "Enter");
}

/** Every image in the log has loaded (a broken link has no natural width). */
async function imagesLoaded(page: Page, selector: string): Promise<number[]> {
  await page.waitForFunction(
    (s) => [...document.querySelectorAll<HTMLImageElement>(s)].every((img) => img.complete),
    selector,
  );
  return page.$$eval(selector, (imgs) => imgs.map((img) => (img as HTMLImageElement).naturalWidth));
}

describe("web chat media (headless Chromium)", () => {
  it("shows the agent's files from signed links and sends an attached image as an image part", {
    timeout: 300_000,
  }, async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    const work = mkdtempSync(join(tmpdir(), "edgeclaw-webchat-media-"));
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
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"],
      viewport: { width: 390, height: 844 },
    });
    cleanups.push(() => browser.close());
    const page = browser.pages()[0] ?? (await browser.newPage());
    const pageErrors: string[] = [];
    page.on("pageerror", (error) => pageErrors.push(error.message));
    const bodies: Array<{ messages: Array<{ content: unknown }> }> = [];
    await page.route("**/v1/chat/completions", async (route) => {
      bodies.push(JSON.parse(route.request().postData() ?? "{}"));
      await route.continue();
    });

    await page.goto(`${dev.url}/#token=${TOKEN}`);
    await page.locator(".note", { hasText: "New conversation" }).waitFor();

    // The demo model writes the SVG into the workspace (its write tool), then names files.
    await say(page, `write pic.svg: ${SVG}`);
    await page.locator(".msg.assistant", { hasText: "write tool returned" }).waitFor();
    await say(page, "two files\nMEDIA:pic.svg\nMEDIA:AGENTS.md");
    const answer = page.locator(".msg.assistant", { hasText: "You said: two files" });
    await answer.locator(".model").waitFor();
    assert.ok(!((await answer.textContent()) ?? "").includes("MEDIA:"), "MEDIA: lines hidden");
    const files = page.locator(".msg.assistant .files").last();
    await files.locator("img").waitFor();
    assert.deepEqual(await imagesLoaded(page, ".msg.assistant .files img"), [40]);
    const link = files.locator("a");
    assert.equal(await link.textContent(), "📎 AGENTS.md");
    const href = (await link.getAttribute("href")) ?? "";
    assert.match(href, /^\/media\/media\/.+&sig=/);
    const fetched = await page.evaluate((url) => fetch(url).then((r) => r.text()), href);
    assert.ok(fetched.length > 0, "the link serves the workspace file");
    // An altered link is refused by the route.
    const forged = await page.evaluate(
      (url) => fetch(url.replace("name=AGENTS.md", "name=x.md")).then((r) => r.status),
      href,
    );
    assert.equal(forged, 403);

    // The operator attaches an image: one image_url part, shown in the message.
    const png = join(work, "red.png");
    writeFileSync(png, PNG);
    await page.setInputFiles("#file", png);
    await page.locator("#attached", { hasText: "red.png" }).waitFor();
    await say(page, "what colour is this?");
    await page.locator(".msg.assistant", { hasText: "You said: what colour is this?" }).waitFor();
    const content = bodies.at(-1)!.messages.at(-1)!.content as Array<Record<string, unknown>>;
    assert.deepEqual(content[0], { type: "text", text: "what colour is this?" });
    assert.equal(content[1]!.type, "image_url");
    assert.match(
      String((content[1]!.image_url as { url: string }).url),
      /^data:image\/png;base64,iVBOR/,
    );
    assert.deepEqual(await imagesLoaded(page, ".msg.user .files img"), [4]);

    // After a reload the history shows the attached image and the agent's files, from fresh links.
    await page.reload();
    await page.locator(".msg.user", { hasText: "what colour is this?" }).waitFor();
    assert.deepEqual(await imagesLoaded(page, ".msg.user .files img"), [4]);
    assert.deepEqual(await imagesLoaded(page, ".msg.assistant .files img"), [40]);
    assert.equal(await page.locator(".msg.assistant .files a").textContent(), "📎 AGENTS.md");
    assert.equal(await page.locator(".msg.assistant", { hasText: "MEDIA:" }).count(), 0);
    await page.screenshot({ path: join(SCREENSHOTS, "media-390.png"), fullPage: true });
    assert.deepEqual(pageErrors, []);
  });
});
