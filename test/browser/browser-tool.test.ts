import { describe, expect, it } from "vitest";
import { parseConfig } from "../../functions/channels/gateway-config.ts";
import { createToolset, runTool } from "../../functions/agent/tools/index.ts";
import type { ToolContext } from "../../functions/agent/types.ts";
import { fakeWebUrl, toolContext } from "../agent/tools/context.ts";
import { orderForm, requestsTo, servePages, uniquePrefix } from "./pages.ts";

/**
 * The browser tool against the real browser Worker (the pool's auxiliary Worker, built from
 * wrangler.browser.toml) driving Debian's Chromium through the loopback Browser Run stand-in. The
 * pages are the test's own, on loopback: the config allows exactly the fake web server's host.
 */

function allowedConfig(extra: Record<string, unknown> = {}) {
  return parseConfig({
    browser: { ssrfPolicy: { allowedHostnames: [new URL(fakeWebUrl()).hostname] }, ...extra },
  });
}

function session(config = allowedConfig()) {
  const ctx = toolContext({
    config,
    sessionKey: `agent:main:webchat:browser-${crypto.randomUUID().slice(0, 8)}`,
  });
  const tools = createToolset(config, "main", { env: ctx.env });
  let n = 0;
  return {
    ctx,
    run: (
      args: Record<string, unknown>,
      toolCallId = `call_${++n}_${crypto.randomUUID().slice(0, 6)}`,
    ) =>
      runTool(tools, { name: "browser", arguments: args }, { ...ctx, toolCallId } as ToolContext),
  };
}

function refOf(snapshot: string, pattern: RegExp): string {
  const line = snapshot.split("\n").find((candidate) => pattern.test(candidate));
  const ref = line && /\[ref=(e\d+)\]/.exec(line)?.[1];
  if (!ref) throw new Error(`no ref for ${pattern} in:\n${snapshot}`);
  return ref;
}

describe("browser tool", () => {
  it("navigates, snapshots with refs, fills and submits a form by ref; the submission arrives once", async () => {
    const prefix = uniquePrefix("form");
    const base = await servePages([
      { path: `${prefix}/order`, body: orderForm(`${prefix}/done`) },
      {
        path: `${prefix}/done`,
        body: "<html><head><title>Done</title></head><body><p>Thank you for your order.</p></body></html>",
      },
    ]);
    const browser = session();
    const opened = await browser.run({ action: "navigate", url: `${base}${prefix}/order` });
    expect(opened.isError, opened.content).toBeUndefined();
    expect(opened.content).toMatch(/<<<EXTERNAL_UNTRUSTED_CONTENT id="[0-9a-f]{16}">>>/);
    const name = refOf(opened.content, /textbox "Name"/);
    const qty = refOf(opened.content, /combobox "Quantity"/);
    const submit = refOf(opened.content, /button "Place order"/);
    const typed = await browser.run({ action: "act", kind: "type", ref: name, text: "Ada" });
    expect(typed.isError, typed.content).toBeUndefined();
    const selected = await browser.run({ action: "act", kind: "select", ref: qty, values: ["3"] });
    expect(selected.isError, selected.content).toBeUndefined();
    const clicked = await browser.run({ action: "act", kind: "click", ref: submit });
    expect(clicked.isError, clicked.content).toBeUndefined();
    const text = await browser.run({ action: "read" });
    expect(text.content).toContain("Thank you for your order.");
    const posts = (await requestsTo(`${prefix}/done`)).filter(
      (request) => request.method === "POST",
    );
    expect(posts.map((post) => post.body)).toEqual(["name=Ada&qty=3"]);
    await browser.run({ action: "stop" });
  });

  it("refuses a loopback page by default: the SSRF rules of web_fetch apply", async () => {
    const prefix = uniquePrefix("default");
    const base = await servePages([{ path: `${prefix}/p`, body: "<p>private</p>" }]);
    const browser = session(parseConfig({}));
    const result = await browser.run({ action: "navigate", url: `${base}${prefix}/p` });
    expect(result.isError).toBe(true);
    expect(result.content).toContain("private, internal and metadata addresses are blocked");
    expect(await requestsTo(`${prefix}/p`)).toEqual([]);
    await browser.run({ action: "stop" });
  });

  it("refuses a redirect hop to a private address: the page never reaches it", async () => {
    const prefix = uniquePrefix("redirect");
    const base = await servePages([
      {
        path: `${prefix}/go`,
        status: 302,
        headers: { location: "http://169.254.169.254/latest/meta-data/" },
        body: "",
      },
    ]);
    const browser = session();
    const result = await browser.run({ action: "navigate", url: `${base}${prefix}/go` });
    expect(result.isError).toBe(true);
    expect(result.content).toContain("browser refused http://169.254.169.254/latest/meta-data/");
    expect(await requestsTo(`${prefix}/go`)).toHaveLength(1);
    await browser.run({ action: "stop" });
  });
});
