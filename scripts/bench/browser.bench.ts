/**
 * What one browsing turn costs locally, action by action: the browser tool → the browser Worker
 * (service binding, BrowserSessionDO) → @cloudflare/playwright → the Browser Run stand-in → Debian's
 * Chromium, against a form served on loopback by the fake web server. One turn: navigate (the first
 * also launches the browser), snapshot, type, select, click (submits, next page loads), read,
 * screenshot (stored in the media store), stop. Medians over EDGECLAW_BENCH_TURNS turns (default 5),
 * and the browser time each turn held a browser open — what Browser Run bills — turned into
 * browser-hours per 1,000 turns with and without the idle tail (`browser.tabCleanup.idleMinutes`,
 * while the agent does not call `stop`). Figures are printed; nothing is asserted about time.
 *
 *   npm run bench:browser
 */
import { env } from "cloudflare:test";
import { it } from "vitest";
import { parseConfig } from "../../functions/channels/gateway-config.ts";
import { createToolset, runTool } from "../../functions/agent/tools/index.ts";
import type { ToolContext } from "../../functions/agent/types.ts";

const benv = env as unknown as Record<string, unknown>;
const TURNS = Number((benv.EDGECLAW_BENCH_TURNS as string | undefined) ?? 5);
/** Browser Run on Workers Paid: 10 browser-hours a month included, then $0.09 per browser-hour. */
const PRICE_PER_HOUR = 0.09;

const fakeWeb = () => String(benv.FAKE_WEB_URL);

/** Serves the turn's two pages on the fake web server (scripts may not import test helpers). */
async function servePages(prefix: string): Promise<string> {
  const pages = {
    [`${prefix}/order`]: `<!doctype html><title>Order</title><h1>Order otters</h1>
<form method="post" action="${prefix}/done"><label>Name <input name="name"></label>
<label>Quantity <select name="qty"><option>1</option><option>2</option></select></label>
<button type="submit">Place order</button></form>`,
    [`${prefix}/done`]: "<title>Done</title><h1>Thank you, order placed</h1>",
  };
  for (const [path, body] of Object.entries(pages))
    await fetch(`${fakeWeb()}/_control/route`, {
      method: "POST",
      body: JSON.stringify({ path, status: 200, headers: { "content-type": "text/html" }, body }),
    });
  return fakeWeb();
}

function toolContext(config: ToolContext["config"], sessionKey: string): ToolContext {
  return {
    env: benv,
    config,
    agentId: "main",
    sessionKey,
    sessionId: sessionKey,
    senderIsOwner: true,
    mainPrivateSession: false,
    status: async () => ({}),
  };
}

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

it("browser: time per action and browser-hours per 1,000 turns", async () => {
  const config = parseConfig({
    browser: { ssrfPolicy: { allowedHostnames: [new URL(fakeWeb()).hostname] } },
  });
  const times = new Map<string, number[]>();
  const openSeconds: number[] = [];
  for (let turn = 0; turn < TURNS; turn++) {
    const prefix = `/bench-browser-${turn}-${crypto.randomUUID().slice(0, 8)}`;
    const base = await servePages(prefix);
    const ctx = toolContext(config, `agent:main:bench:browser-${turn}-${Date.now()}`);
    const tools = createToolset(config, "main", { env: ctx.env });
    let browserSeconds = 0;
    const step = async (label: string, args: Record<string, unknown>) => {
      const started = performance.now();
      const result = await runTool(tools, { name: "browser", arguments: args }, {
        ...ctx,
        toolCallId: `bench_${turn}_${label}`,
      } as ToolContext);
      const ms = performance.now() - started;
      if (result.isError) throw new Error(`${label}: ${result.content}`);
      browserSeconds += Number(/\[browser time ([\d.]+) s/.exec(result.content)?.[1] ?? 0);
      times.set(label, [...(times.get(label) ?? []), ms]);
    };
    await step("navigate (launch + load)", { action: "navigate", url: `${base}${prefix}/order` });
    await step("snapshot", { action: "snapshot" });
    await step("act type", { action: "act", kind: "type", ref: "e5", text: "Ada" });
    await step("act select", { action: "act", kind: "select", ref: "e7", values: ["2"] });
    await step("act click (submit + load)", { action: "act", kind: "click", ref: "e8" });
    await step("read", { action: "read" });
    await step("screenshot (+ media store)", { action: "screenshot" });
    await step("stop", { action: "stop" });
    openSeconds.push(browserSeconds);
  }
  const rows = [...times].map(
    ([label, samples]) => `  ${label.padEnd(28)} ${median(samples).toFixed(0).padStart(6)} ms`,
  );
  const open = median(openSeconds);
  const hours = (tailSeconds: number) => (1000 * (open + tailSeconds)) / 3600;
  const idleMinutes = config.browser.tabCleanup.idleMinutes;
  console.log(
    [
      `browser bench: ${TURNS} turns (median per action, wall time at the tool)`,
      ...rows,
      `  browser open per turn (billed time): ${open.toFixed(2)} s`,
      `browser-hours per 1,000 turns at $${PRICE_PER_HOUR}/h (past the 10 included a month):`,
      `  the agent calls stop:             ${hours(0).toFixed(2)} h  ≈ $${(hours(0) * PRICE_PER_HOUR).toFixed(2)}`,
      `  left to the idle close (${idleMinutes} min): ${hours(idleMinutes * 60).toFixed(1)} h  ≈ $${(hours(idleMinutes * 60) * PRICE_PER_HOUR).toFixed(2)}`,
    ].join("\n"),
  );
});
