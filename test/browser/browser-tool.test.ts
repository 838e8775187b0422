import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { waitFor } from "../durable-objects/helpers.ts";
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

const standin = () => (env as unknown as { TEST_BROWSER_RUN_URL: string }).TEST_BROWSER_RUN_URL;

interface StandinSession {
  sessionId: string;
  endTime?: number;
  connections: number;
}

async function standinSession(id: string): Promise<StandinSession | undefined> {
  const all = (await (await fetch(`${standin()}/_control/sessions`)).json()) as StandinSession[];
  return all.find((session) => session.sessionId === id);
}

function sessionIdIn(status: string): string {
  const id = /session ([0-9a-f-]{36})/.exec(status)?.[1];
  if (!id) throw new Error(`no session id in: ${status}`);
  return id;
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

  it("a lost connection is reconnected by session id: the tab and its page are still there", async () => {
    const prefix = uniquePrefix("reconnect");
    const base = await servePages([
      { path: `${prefix}/a`, body: "<title>Kept</title><h1>Still here</h1>" },
    ]);
    const browser = session();
    expect(
      (await browser.run({ action: "navigate", url: `${base}${prefix}/a` })).isError,
    ).toBeUndefined();
    const id = sessionIdIn((await browser.run({ action: "status" })).content);
    await fetch(`${standin()}/_control/sessions/${id}/drop`, { method: "POST" });
    await waitFor(async () => (await standinSession(id))?.connections === 0, 10_000, "the drop");
    const again = await browser.run({ action: "snapshot" });
    expect(again.content).toContain("Still here");
    expect(again.content).not.toContain("tabs are gone");
    expect(sessionIdIn((await browser.run({ action: "status" })).content)).toBe(id);
    expect((await requestsTo(`${prefix}/a`)).length).toBe(1);
    await browser.run({ action: "stop" });
  });

  it("a session the platform ended is replaced, and the answer says its tabs are gone", async () => {
    const prefix = uniquePrefix("ended");
    const base = await servePages([{ path: `${prefix}/a`, body: "<h1>First</h1>" }]);
    const browser = session();
    await browser.run({ action: "navigate", url: `${base}${prefix}/a` });
    const id = sessionIdIn((await browser.run({ action: "status" })).content);
    await fetch(`${standin()}/_control/sessions/${id}/drop`, { method: "POST" });
    await fetch(`${standin()}/_control/sessions/${id}/end`, { method: "POST" });
    await waitFor(async () => Boolean((await standinSession(id))?.endTime), 10_000, "the end");
    const tabs = await browser.run({ action: "tabs" });
    expect(tabs.content).toContain("the earlier browser session had ended, so its tabs are gone");
    expect(tabs.content).not.toContain(`${prefix}/a`);
    expect(sessionIdIn((await browser.run({ action: "status" })).content)).not.toBe(id);
    await browser.run({ action: "stop" });
  });

  it("a screenshot goes to the media store; the model gets its key, the browser Worker keeps no bytes", async () => {
    const prefix = uniquePrefix("shot");
    const base = await servePages([
      { path: `${prefix}/a`, body: "<h1 style='color:teal'>Picture me</h1>" },
    ]);
    const browser = session();
    await browser.run({ action: "navigate", url: `${base}${prefix}/a` });
    const shot = await browser.run({ action: "screenshot" }, "call_shot_1");
    expect(shot.isError, shot.content).toBeUndefined();
    const key = /Stored as media (\S+) \((\d+) bytes, image\/png\)/.exec(shot.content);
    expect(key).not.toBeNull();
    const object = await env.MEDIA!.get(key![1]!);
    const bytes = new Uint8Array(await object!.arrayBuffer());
    expect(bytes.byteLength).toBe(Number(key![2]));
    expect([...bytes.subarray(0, 4)]).toEqual([0x89, 0x50, 0x4e, 0x47]);
    // Asked again (a resumed run), the same key is named and nothing is taken again.
    const again = await browser.run({ action: "screenshot" }, "call_shot_1");
    expect(again.content).toContain(`Stored as media ${key![1]}`);
    expect(again.content).toContain("answered from the record of this call");
    await browser.run({ action: "stop" });
  });

  it("browser time is capped per session day (browser.maxSecondsPerSessionDay)", async () => {
    const prefix = uniquePrefix("cap");
    const base = await servePages([{ path: `${prefix}/a`, body: "<h1>Capped</h1>" }]);
    const browser = session(allowedConfig({ maxSecondsPerSessionDay: 1 }));
    await browser.run({ action: "navigate", url: `${base}${prefix}/a` });
    let refused = "";
    await waitFor(
      async () => {
        const result = await browser.run({ action: "snapshot" });
        if (result.isError) refused = result.content;
        return result.isError === true;
      },
      15_000,
      "the cap",
    );
    expect(refused).toContain("browser time cap reached");
    await browser.run({ action: "stop" });
  });

  it("act evaluate runs only while browser.evaluateEnabled is on", async () => {
    const prefix = uniquePrefix("eval");
    const base = await servePages([{ path: `${prefix}/a`, body: "<title>Eval</title><h1>x</h1>" }]);
    const on = session();
    await on.run({ action: "navigate", url: `${base}${prefix}/a` });
    const value = await on.run({
      action: "act",
      kind: "evaluate",
      fn: "() => document.title + '!'",
    });
    expect(value.content).toContain('"Eval!"');
    await on.run({ action: "stop" });
    const off = session(allowedConfig({ evaluateEnabled: false }));
    await off.run({ action: "navigate", url: `${base}${prefix}/a` });
    const refused = await off.run({ action: "act", kind: "evaluate", fn: "() => 1" });
    expect(refused.isError).toBe(true);
    expect(refused.content).toContain("browser.evaluateEnabled");
    await off.run({ action: "stop" });
  });

  it("an idle session's tabs are closed and its hosted browser ended by the object's alarm", async () => {
    const prefix = uniquePrefix("idle");
    const base = await servePages([{ path: `${prefix}/a`, body: "<h1>Idle</h1>" }]);
    const browser = session(allowedConfig({ tabCleanup: { idleMinutes: 0.02 } }));
    await browser.run({ action: "navigate", url: `${base}${prefix}/a` });
    const id = sessionIdIn((await browser.run({ action: "status" })).content);
    await waitFor(
      async () => Boolean((await standinSession(id))?.endTime),
      20_000,
      "the idle close",
    );
    expect((await browser.run({ action: "status" })).content).toContain("browser: not running");
  });
});
