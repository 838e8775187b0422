import { beforeAll, describe, expect, it } from "vitest";
import { newScenario } from "./model-helpers.ts";
import { slackMessages, uniqueId } from "../channels/slack/helpers.ts";
import {
  approveOpsSenders,
  collectRunEvents,
  modelRequests,
  opsDmEvent,
  scriptModel,
  sessionStub,
  waitFor,
  webchatEvent,
} from "../durable-objects/helpers.ts";

/**
 * The Gemini and Responses adapters end to end (#24 item 8): a Slack DM on the "ops" account in a
 * session switched to the provider with /model, whose answer takes a tool round. For Gemini the
 * round only succeeds if the call's thoughtSignature survives the session transcript (the fake
 * refuses a Gemini 3 call sent back without it, and the user would get an error notice instead).
 */
const OWNER = uniqueId("UPROV");
beforeAll(() => approveOpsSenders(OWNER));

async function say(sessionKey: string, text: string): Promise<string> {
  const events = await collectRunEvents(
    await sessionStub(sessionKey).chat(webchatEvent(sessionKey, text)),
  );
  const done = events.find((event) => event.type === "done");
  return done?.type === "done" ? done.text : JSON.stringify(events);
}

async function toolRoundThroughSlack(modelRef: string, name: string) {
  const key = `agent:main:${name}-${crypto.randomUUID().slice(0, 8)}`;
  expect(await say(key, `/model ${modelRef}`)).toContain(`Model set to ${modelRef}`);
  const channel = uniqueId("D");
  const scenario = newScenario(name);
  await scriptModel(scenario, [
    { type: "tool_calls", calls: [{ name: "session_status", arguments: {} }] },
    { type: "text", text: "All good here." },
  ]);
  expect(
    await sessionStub(key).accept(
      opsDmEvent(key, OWNER, channel, `how are we doing? [scenario:${scenario}]`),
    ),
  ).toMatchObject({ status: "accepted" });
  await waitFor(
    async () => (await slackMessages(channel)).some((m) => m.text === "All good here."),
    25_000,
    "the answer",
  );
  const requests = await modelRequests(scenario);
  expect(requests).toHaveLength(2);
  return requests;
}

describe("provider adapters through a channel", () => {
  it("answers a Slack DM with Gemini across a tool round, the call's signature kept in the transcript", async () => {
    const requests = await toolRoundThroughSlack("fakegoogle/gemini-3.1-pro-preview", "gemini-dm");
    expect(requests.map((r) => r.api)).toEqual(["google", "google"]);
    const [call, result] = requests[1]!.body.contents.slice(-2);
    expect(call.role).toBe("model");
    expect(call.parts[0].functionCall.name).toBe("session_status");
    expect(call.parts[0].thoughtSignature).toBe(btoa("fake-gemini-signature:session_status"));
    expect(result.parts[0].functionResponse.name).toBe("session_status");
  });

  it("answers a Slack DM through the Responses API across a tool round", async () => {
    const requests = await toolRoundThroughSlack("fakeresponses/gpt-test", "responses-dm");
    expect(requests.map((r) => r.api)).toEqual(["responses", "responses"]);
    const items = requests[1]!.body.input.slice(-2);
    expect(items.map((item: { type: string }) => item.type)).toEqual([
      "function_call",
      "function_call_output",
    ]);
    expect(items[0].call_id).toBe(items[1].call_id);
  });
});
