import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { modelSelectionFor } from "../../functions/agent/model-resolve.ts";
import { parseConfig } from "../../functions/channels/gateway-config.ts";
import type { Env } from "../../workers/env.ts";
import { fakeModelUrl, newScenario, testEnv } from "../agent/model-helpers.ts";
import {
  collectRunEvents,
  modelRequests,
  scriptModel,
  sessionStub,
  webchatEvent,
} from "./helpers.ts";

/**
 * A new user's first run: no model anywhere in the config, only a provider key in the environment
 * (or only the demo switch). The SessionDO gets exactly those bindings; the built-in provider's
 * base URL points at the fake model server, as a proxy setting would.
 */
async function sessionWithBindings(key: string, bindings: Partial<Env>) {
  const stub = sessionStub(key);
  const config = {
    gateway: { auth: { token: "t" } },
    models: { providers: { anthropic: { baseUrl: fakeModelUrl() } } },
  };
  const env: Env = {
    ...testEnv,
    EDGECLAW_CONFIG: JSON.stringify(config),
    ANTHROPIC_API_KEY: undefined,
    OPENAI_API_KEY: undefined,
    EDGECLAW_FAKE_MODEL: undefined,
    ...bindings,
  };
  // The deployment's bindings, as this object sees them from now on.
  await runInDurableObject(stub, (instance) => {
    Object.defineProperty(instance, "env", { value: env, configurable: true, writable: true });
  });
  return stub;
}

function doneText(events: Awaited<ReturnType<typeof collectRunEvents>>): string {
  const done = events.find((event) => event.type === "done");
  return done?.type === "done" ? done.text : "";
}

describe("the model a key alone gives", () => {
  it("answers with the provider's default model when only ANTHROPIC_API_KEY is set, and /status names it", async () => {
    const key = `agent:main:default-model-${crypto.randomUUID()}`;
    const stub = await sessionWithBindings(key, { ANTHROPIC_API_KEY: "sk-ant-only-key" });
    const scenario = newScenario("default-model");
    await scriptModel(scenario, [{ type: "text", text: "hello from the default model" }]);

    const events = await collectRunEvents(
      await stub.chat(webchatEvent(key, `hi [scenario:${scenario}]`)),
    );
    expect(doneText(events)).toBe("hello from the default model");

    const expected = modelSelectionFor(parseConfig({}), { ANTHROPIC_API_KEY: "x" }).primary!;
    const [request] = await modelRequests(scenario);
    expect(request?.api).toBe("anthropic");
    expect(`anthropic/${request!.body.model}`).toBe(expected);
    expect(request!.headers["x-api-key"]).toBe("sk-ant-only-key");

    const status = doneText(await collectRunEvents(await stub.chat(webchatEvent(key, "/status"))));
    expect(status).toContain(`Model: ${expected} (default for the API key`);
  });

  it("/status names the demo model when it is the one answering", async () => {
    const key = `agent:main:demo-model-${crypto.randomUUID()}`;
    const stub = await sessionWithBindings(key, { EDGECLAW_FAKE_MODEL: "1" });
    const status = doneText(await collectRunEvents(await stub.chat(webchatEvent(key, "/status"))));
    expect(status).toContain("Model: fake/edgeclaw-demo (the scripted demo model");
  });
});

describe("the web chat's history", () => {
  it("keeps command turns and 'no model' notices, in order, after a reload", async () => {
    const key = `agent:main:history-${crypto.randomUUID()}`;
    const stub = await sessionWithBindings(key, {});
    await collectRunEvents(await stub.chat(webchatEvent(key, "/status")));
    const notice = doneTextOrNotice(
      await collectRunEvents(await stub.chat(webchatEvent(key, "hello there"))),
    );
    expect(notice).toMatch(/No model configured/);

    const history = await stub.history();
    expect(history.map((entry) => entry.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(history[0]!.text).toBe("/status");
    expect(history[1]!.text).toContain("edgeclaw status");
    expect(history[2]!.text).toBe("hello there");
    expect(history[3]).toMatchObject({ text: notice, notice: true });
  });
});

function doneTextOrNotice(events: Awaited<ReturnType<typeof collectRunEvents>>): string {
  for (const event of events) {
    if (event.type === "done" && event.text) return event.text;
    if (event.type === "error" && "message" in event) return String(event.message);
  }
  return events.map((event) => ("text" in event ? String(event.text) : "")).join("");
}
