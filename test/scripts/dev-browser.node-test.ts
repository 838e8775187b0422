import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { startFakeModelServer } from "../fakes/model-server.ts";
import { freePort } from "../../scripts/lib/local-ports.ts";
import { killStartedDevs, startDev, stopDev } from "./dev-process.ts";
import { tempProject } from "./helpers.ts";

/**
 * `npm run dev` has the browser: dev starts the Browser Run stand-in over /usr/bin/chromium, the
 * local Worker serves the browser Worker beside the main one bound as BROWSER_WORKER, and a
 * scripted model's `browser` calls drive a page this test serves on loopback (allowed by
 * browser.ssrfPolicy.allowedHostnames): navigate, type by ref, submit, and the result page's text
 * reaches the model. Then `stop`, and Ctrl-C leaves no Chromium behind.
 */
const TOKEN = "dev-browser-test-token";
let model: Awaited<ReturnType<typeof startFakeModelServer>>;
let pages: Server;
let pagesUrl: string;
const posted: string[] = [];
/** test/browser/pages.ts's order form (that file runs in workerd): the same refs, e5 and e8. */
const ORDER_FORM = `<!doctype html><html><head><title>Order</title></head><body>
<h1>Order otters</h1>
<form method="post" action="/done">
  <label>Name <input name="name" type="text"></label>
  <label>Quantity <select name="qty"><option>1</option><option>2</option><option>3</option></select></label>
  <button type="submit">Place order</button>
</form></body></html>`;

before(async () => {
  model = await startFakeModelServer();
  pages = createServer((request, response) => {
    if (request.method === "POST") {
      let body = "";
      request.on("data", (chunk: Buffer) => (body += chunk.toString()));
      request.on("end", () => {
        posted.push(body);
        response.writeHead(200, { "content-type": "text/html" });
        response.end(
          `<title>Done</title><h1>Order placed for ${new URLSearchParams(body).get("name")}</h1>`,
        );
      });
      return;
    }
    response.writeHead(200, { "content-type": "text/html" });
    response.end(ORDER_FORM);
  });
  await new Promise<void>((resolve) => pages.listen(0, "127.0.0.1", resolve));
  pagesUrl = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
});

after(async () => {
  killStartedDevs();
  await model?.stop();
  pages?.close();
});

/** Chromium processes in dev's process group (the stand-in starts them from dev's own process). */
function chromiumsOf(pgid: number): number {
  return execFileSync("ps", ["-eo", "pgid=,stat=,args="], { encoding: "utf8" })
    .split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter(
      ([group, stat, program]) =>
        Number(group) === pgid && !stat?.startsWith("Z") && /chrom/.test(program ?? ""),
    ).length;
}

describe("npm run dev with the browser", () => {
  it("binds the browser Worker: the model navigates, types by ref and submits on loopback", async () => {
    const project = tempProject({
      "edgeclaw.json5": JSON.stringify({
        agents: { defaults: { model: "local/echo" } },
        models: {
          providers: {
            local: {
              baseUrl: `${model.url}/v1`,
              api: "openai-completions",
              apiKey: { source: "env", id: "LOCAL_MODEL_KEY" },
              models: [{ id: "echo" }],
            },
          },
        },
        browser: { ssrfPolicy: { allowedHostnames: ["127.0.0.1"] } },
      }),
    });
    const dev = await startDev(join(project, "data"), await freePort("127.0.0.1"), {
      EDGECLAW_CONFIG: join(project, "edgeclaw.json5"),
      EDGECLAW_FAKE_MODEL: "",
      LOCAL_MODEL_KEY: "sk-local-test",
      ANTHROPIC_API_KEY: "",
      OPENAI_API_KEY: "",
      EDGECLAW_GATEWAY_TOKEN: TOKEN,
      OPENCLAW_GATEWAY_TOKEN: "",
      EDGECLAW_DEV_BROWSER: "",
      WRANGLER_SEND_METRICS: "false",
    });
    try {
      assert.match(
        dev.output(),
        /^ {2}Browser: \/usr\/bin\/chromium through the Browser Run stand-in on http:\/\/127\.0\.0\.1:\d+ /m,
      );
      const scenario = `dev-browser-${Date.now()}`;
      const call = (id: string, args: Record<string, unknown>) => ({
        type: "tool_calls",
        calls: [{ id, name: "browser", arguments: args }],
      });
      const script = await fetch(`${model.url}/_control/script`, {
        method: "POST",
        body: JSON.stringify({
          scenario,
          steps: [
            call("call_nav", { action: "navigate", url: `${pagesUrl}/order` }),
            call("call_type", { action: "act", kind: "type", ref: "e5", text: "Ada" }),
            call("call_submit", { action: "act", kind: "click", ref: "e8" }),
            call("call_stop", { action: "stop" }),
            { type: "text", text: "Ordered." },
          ],
        }),
      });
      assert.equal(script.status, 200, await script.text());
      const answer = await fetch(`${dev.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify({
          model: "openclaw/default",
          user: "dev-browser",
          messages: [{ role: "user", content: `order otters [scenario:${scenario}]` }],
        }),
      });
      assert.equal(answer.status, 200, await answer.clone().text());
      assert.match(await answer.text(), /Ordered\./);
      const log = (await (
        await fetch(`${model.url}/_control/requests?scenario=${scenario}`)
      ).json()) as { requests: Array<{ body: { messages: unknown[] } }> };
      const results = new Map<string, string>();
      for (const request of log.requests)
        for (const message of request.body.messages as Array<{
          tool_call_id?: string;
          content?: string;
        }>)
          if (message.tool_call_id) results.set(message.tool_call_id, message.content ?? "");
      assert.match(results.get("call_nav") ?? "", /textbox "Name" \[ref=e5\]/, dev.output());
      assert.match(results.get("call_submit") ?? "", /Order placed for Ada/);
      assert.match(results.get("call_stop") ?? "", /browser time \d+\.\d\d s/);
      assert.deepEqual(posted, ["name=Ada&qty=1"]);
      // `stop` ended the hosted browser: the stand-in's Chromium is gone before dev is.
      for (let tries = 0; tries < 20 && chromiumsOf(dev.child.pid!) > 0; tries++)
        await new Promise((resolve) => setTimeout(resolve, 250));
      assert.equal(chromiumsOf(dev.child.pid!), 0);
    } finally {
      await stopDev(dev);
    }
    assert.equal(chromiumsOf(dev.child.pid!), 0, "no Chromium outlives dev");
  });
});
