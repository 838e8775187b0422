import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { RoutedEvent, RunEvent } from "../../durable-objects/session-api.ts";
import {
  collectRunEvents,
  modelRequests,
  scriptModel,
  sessionStub,
  waitFor,
  webchatEvent,
} from "../durable-objects/helpers.ts";
import { newScenario } from "../agent/model-helpers.ts";
import { imagesOf } from "../fakes/model-images.ts";
import { linkPage, loginForm, orderForm, requestsTo, servePages, uniquePrefix } from "./pages.ts";

/**
 * The browser end to end in workerd: a scripted model → the SessionDO's run → the browser tool →
 * the browser Worker over its service binding → Debian's Chromium (through the Browser Run
 * stand-in) → the test's pages on loopback, and each result back to the model. The refs the model
 * uses are the ones these pages' snapshots carry (e5, e7, e8: asserted in the snapshots it saw).
 */

function sessionKey(name: string): string {
  return `agent:main:webchat:browser-${name}-${crypto.randomUUID().slice(0, 8)}`;
}

function event(key: string, text: string): RoutedEvent {
  return webchatEvent(key, text);
}

async function chat(key: string, text: string): Promise<RunEvent[]> {
  return collectRunEvents(await sessionStub(key).chat(event(key, text)));
}

function doneText(events: RunEvent[]): string {
  const done = events.find((e) => e.type === "done") as { text: string } | undefined;
  return done?.text ?? JSON.stringify(events.at(-1));
}

/** What the model was sent in its request number `index` (the tool results so far). */
async function seen(scenario: string, index: number): Promise<string> {
  return JSON.stringify((await modelRequests(scenario))[index]?.body.messages ?? []);
}

const call = (id: string, args: Record<string, unknown>) => ({
  type: "tool_calls",
  calls: [{ id, name: "browser", arguments: args }],
});

describe("the browser loop through a run", () => {
  it("a screenshot reaches a model with image input as an image, after the tool result naming its key", async () => {
    const prefix = uniquePrefix("run-shot");
    const base = await servePages([{ path: `${prefix}/order`, body: orderForm(`${prefix}/done`) }]);
    const scenario = newScenario("browser-shot");
    await scriptModel(scenario, [
      call("call_nav", { action: "navigate", url: `${base}${prefix}/order` }),
      call("call_shot", { action: "screenshot" }),
      { type: "text", text: "Saw it." },
    ]);
    const key = sessionKey("shot");
    expect(doneText(await chat(key, `look [scenario:${scenario}]`))).toBe("Saw it.");
    // The suite's model (fakeanthropic/claude-test) declares image input.
    const body = (await modelRequests(scenario))[2]!.body as Record<string, unknown>;
    expect(imagesOf("anthropic", body)).toEqual([
      { mimeType: "image/png", bytes: expect.any(Number) },
    ]);
    const messages = JSON.stringify(body.messages);
    expect(messages).toMatch(/Stored as media [^ ]+ \(\d+ bytes, image\/png\)/);
    expect(messages).toContain("[The image from tool call call_shot above]");
  });

  it("a form: the model snapshots, types and selects by ref, submits, and reads the result", async () => {
    const prefix = uniquePrefix("run-form");
    const base = await servePages([
      { path: `${prefix}/order`, body: orderForm(`${prefix}/done`) },
      { path: `${prefix}/done`, body: "<title>Done</title><h1>Thank you, order placed</h1>" },
    ]);
    const scenario = newScenario("browser-form");
    await scriptModel(scenario, [
      call("call_nav", { action: "navigate", url: `${base}${prefix}/order` }),
      call("call_type", { action: "act", kind: "type", ref: "e5", text: "Ada" }),
      call("call_select", { action: "act", kind: "select", ref: "e7", values: ["2"] }),
      call("call_submit", { action: "act", kind: "click", ref: "e8" }),
      call("call_stop", { action: "stop" }),
      { type: "text", text: "Ordered two." },
    ]);
    const key = sessionKey("form");
    expect(doneText(await chat(key, `order otters [scenario:${scenario}]`))).toBe("Ordered two.");
    const afterNavigate = await seen(scenario, 1);
    expect(afterNavigate).toContain('textbox \\"Name\\" [ref=e5]');
    expect(afterNavigate).toContain('button \\"Place order\\" [ref=e8]');
    expect(afterNavigate).toContain("EXTERNAL_UNTRUSTED_CONTENT");
    expect(await seen(scenario, 4)).toContain("Thank you, order placed");
    const posts = (await requestsTo(`${prefix}/done`)).filter((r) => r.method === "POST");
    expect(posts.map((post) => post.body)).toEqual(["name=Ada&qty=2"]);
  });

  it("a login: fill both fields by ref, sign in, the session cookie carries to the next page", async () => {
    const prefix = uniquePrefix("run-login");
    const base = await servePages([
      { path: `${prefix}/login`, body: loginForm(`${prefix}/session`) },
      {
        path: `${prefix}/session`,
        status: 303,
        headers: { location: `${prefix}/account`, "set-cookie": `sid=ok-ada; Path=/` },
        body: "",
      },
      {
        path: `${prefix}/account`,
        body: `<title>Account</title><h1 id="who">Not signed in</h1><script>if (document.cookie.includes("sid=ok-ada")) document.getElementById("who").textContent = "Signed in as ada";</script>`,
      },
    ]);
    const scenario = newScenario("browser-login");
    await scriptModel(scenario, [
      call("call_nav", { action: "navigate", url: `${base}${prefix}/login` }),
      call("call_fill", {
        action: "act",
        kind: "fill",
        fields: [
          { ref: "e5", value: "ada" },
          { ref: "e7", value: "correct horse" },
        ],
      }),
      call("call_signin", { action: "act", kind: "click", ref: "e8" }),
      call("call_stop", { action: "stop" }),
      { type: "text", text: "Signed in." },
    ]);
    const key = sessionKey("login");
    expect(doneText(await chat(key, `sign in [scenario:${scenario}]`))).toBe("Signed in.");
    expect(await seen(scenario, 3)).toContain("Signed in as ada");
    const posts = (await requestsTo(`${prefix}/session`)).filter((r) => r.method === "POST");
    expect(posts.map((post) => post.body)).toEqual(["user=ada&pass=correct+horse"]);
  });

  it("several tabs: a link opens a second tab, the model focuses it by position, reads it, closes it", async () => {
    const prefix = uniquePrefix("run-tabs");
    const base = await servePages([
      { path: `${prefix}/start`, body: linkPage(`${prefix}/report`) },
      { path: `${prefix}/report`, body: "<title>Report</title><p>Otter census: 412 counted.</p>" },
    ]);
    const scenario = newScenario("browser-tabs");
    await scriptModel(scenario, [
      call("call_nav", { action: "navigate", url: `${base}${prefix}/start` }),
      call("call_link", { action: "act", kind: "click", ref: "e4" }),
      call("call_tabs", { action: "tabs" }),
      call("call_focus", { action: "focus", targetId: "2" }),
      call("call_read", { action: "read" }),
      call("call_close", { action: "close" }),
      call("call_tabs_after", { action: "tabs" }),
      call("call_stop", { action: "stop" }),
      { type: "text", text: "412 otters." },
    ]);
    const key = sessionKey("tabs");
    expect(doneText(await chat(key, `count otters [scenario:${scenario}]`))).toBe("412 otters.");
    expect(await seen(scenario, 2)).toContain("a new tab opened");
    expect(await seen(scenario, 3)).toContain("tabs (2; * = current)");
    expect(await seen(scenario, 5)).toContain("Otter census: 412 counted.");
    expect(await seen(scenario, 7)).toContain("tabs (1; * = current)");
  });

  it("a crash mid-run: the resumed run asks again with the same call id and the form is not submitted twice", async () => {
    const prefix = uniquePrefix("run-crash");
    const base = await servePages([
      { path: `${prefix}/order`, body: orderForm(`${prefix}/done`) },
      // The answer to the submit is slow, so the session's object dies while the submit is under way.
      {
        path: `${prefix}/done`,
        body: "<title>Done</title><h1>Thank you, order placed</h1>",
        delayMs: 2_000,
      },
    ]);
    const scenario = newScenario("browser-crash");
    await scriptModel(scenario, [
      call("call_nav", { action: "navigate", url: `${base}${prefix}/order` }),
      call("call_type", { action: "act", kind: "type", ref: "e5", text: "Grace" }),
      call("call_submit", { action: "act", kind: "click", ref: "e8" }),
      call("call_stop", { action: "stop" }),
      { type: "text", text: "Ordered once." },
    ]);
    const key = sessionKey("crash");
    const first = sessionStub(key)
      .chat(event(key, `order [scenario:${scenario}]`))
      .then(collectRunEvents)
      .catch(() => undefined);
    await waitFor(
      async () => (await requestsTo(`${prefix}/done`)).some((r) => r.method === "POST"),
      20_000,
      "the submit reaching the page's server",
    );
    // The session's object dies with the browser call in flight; its result never reached the transcript.
    await runInDurableObject(sessionStub(key), (_instance, state) =>
      state.abort("simulated crash"),
    ).catch(() => undefined);
    await first;
    await runInDurableObject(sessionStub(key), (_instance, state) =>
      state.storage.setAlarm(Date.now() + 60_000),
    );
    await runDurableObjectAlarm(sessionStub(key));
    await waitFor(
      async () => (await modelRequests(scenario)).length >= 5,
      20_000,
      "the resumed run's last model call",
    );
    const afterSubmit = await seen(scenario, 3);
    expect(afterSubmit).toContain("Thank you, order placed");
    expect(afterSubmit).toContain("answered from the record of this call");
    const posts = (await requestsTo(`${prefix}/done`)).filter((r) => r.method === "POST");
    expect(posts.map((post) => post.body)).toEqual(["name=Grace&qty=1"]);
    // Browser time metered once per call, the interrupted one included (asked again, settled once).
    const metered = await runInDurableObject(sessionStub(key), (_instance, state) =>
      state.storage.sql
        .exec<{ id: string }>(`SELECT id FROM model_calls WHERE kind = 'browser' ORDER BY id`)
        .toArray()
        .map((row) => row.id),
    );
    expect(metered).toEqual([
      "browser:call_nav",
      "browser:call_stop",
      "browser:call_submit",
      "browser:call_type",
    ]);
  });
});
