import { abortAllDurableObjects, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import type OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { sessionStub, waitFor } from "../durable-objects/helpers.ts";
import {
  client,
  expectError,
  modelRequests,
  newScenario,
  parseSse,
  post,
  script,
} from "./responses-helpers.ts";

/**
 * Client-side function tools on /v1/responses: the model's call ends the response with a
 * function_call item while the durable run waits in its SessionDO; the next request's
 * function_call_output resumes that run. The gateway never runs the tool, and a restart of the
 * object between the two requests loses nothing.
 */

const weatherTool = {
  type: "function" as const,
  name: "get_weather",
  description: "The weather in a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  strict: false,
};

async function callTheTool(
  scenario: string,
  user: string,
  then = "It is 21°C in Paris.",
): Promise<OpenAI.Responses.Response> {
  await script(scenario, [
    {
      type: "tool_calls",
      text: "Checking.",
      calls: [{ id: "call_weather_1", name: "get_weather", arguments: { city: "Paris" } }],
    },
    { type: "text", text: then },
  ]);
  return client.responses.create({
    model: "openclaw",
    user,
    input: `[scenario:${scenario}] weather in Paris?`,
    tools: [weatherTool],
  });
}

/** The tool_result blocks of an Anthropic Messages request, with their text. */
function toolResults(messages: Array<{ role: string; content: unknown }>) {
  return messages.flatMap((message) =>
    Array.isArray(message.content)
      ? (message.content as Array<Record<string, unknown>>)
          .filter((block) => block.type === "tool_result")
          .map((block) => ({
            tool_use_id: block.tool_use_id,
            content:
              typeof block.content === "string"
                ? block.content
                : (block.content as Array<{ text?: string }>)
                    .map((part) => part.text ?? "")
                    .join(""),
          }))
      : [],
  );
}

function functionCalls(response: OpenAI.Responses.Response) {
  return response.output.filter(
    (item): item is OpenAI.Responses.ResponseFunctionToolCall => item.type === "function_call",
  );
}

describe("/v1/responses client function tools", () => {
  it("ends the response with the function call, and the next request's output resumes the run", async () => {
    const scenario = newScenario("tool");
    const user = `resp-tool-${crypto.randomUUID()}`;
    const first = await callTheTool(scenario, user);
    expect(first.status).toBe("completed");
    const [call] = functionCalls(first);
    expect(call).toMatchObject({
      type: "function_call",
      status: "completed",
      call_id: "call_weather_1",
      name: "get_weather",
    });
    expect(JSON.parse(call!.arguments)).toEqual({ city: "Paris" });
    expect(first.output_text).toBe("Checking.");
    // The model was offered the caller's tool beside the agent's own.
    const [offered] = await modelRequests(scenario);
    expect(JSON.stringify(offered!.body.tools)).toContain('"get_weather"');

    // Without the output, the run cannot go on.
    const missing = await post({
      model: "openclaw",
      user,
      input: `[scenario:${scenario}] never mind`,
      previous_response_id: first.id,
    });
    expect(await expectError(missing, 400, { code: "missing_function_call_output" })).toContain(
      "call_weather_1",
    );

    const second = await client.responses.create({
      model: "openclaw",
      user,
      previous_response_id: first.id,
      input: [{ type: "function_call_output", call_id: call!.call_id, output: '{"celsius":21}' }],
      tools: [weatherTool],
    });
    expect(second.output_text).toBe("It is 21°C in Paris.");
    expect(functionCalls(second)).toEqual([]);
    const requests = await modelRequests(scenario);
    expect(requests).toHaveLength(2);
    // The fake model speaks Anthropic's Messages API: the result is a tool_result block.
    expect(toolResults(requests[1]!.body.messages)).toEqual([
      { tool_use_id: "call_weather_1", content: '{"celsius":21}' },
    ]);
    // One run, one transcript: the resumed call sees the original question once.
    expect(JSON.stringify(requests[1]!.body.messages).split("weather in Paris?")).toHaveLength(2);

    // The calls were answered once: the same output again is refused.
    const twice = await post({
      model: "openclaw",
      user,
      previous_response_id: first.id,
      input: [{ type: "function_call_output", call_id: call!.call_id, output: "again" }],
    });
    await expectError(twice, 400, { code: "previous_response_superseded" });
    expect(await modelRequests(scenario)).toHaveLength(2);
  });

  it("streams the function call as OpenAI's function_call events", async () => {
    const scenario = newScenario("tool-stream");
    await script(scenario, [
      {
        type: "tool_calls",
        calls: [{ id: "call_s1", name: "get_weather", arguments: { city: "Oslo" } }],
      },
    ]);
    const response = await post({
      model: "openclaw",
      input: `[scenario:${scenario}] weather in Oslo?`,
      tools: [weatherTool],
      stream: true,
    });
    const events = parseSse(await response.text()).filter((e) => e.data !== "[DONE]");
    expect(events.map((e) => e.event)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.completed",
    ]);
    const done = events[5]!.data as { item: { type: string; call_id: string; status: string } };
    expect(done.item).toMatchObject({
      type: "function_call",
      call_id: "call_s1",
      status: "completed",
    });
  });

  it("survives the session object restarting between the call and its output", async () => {
    const scenario = newScenario("tool-crash");
    const user = `resp-crash-${crypto.randomUUID()}`;
    const first = await callTheTool(scenario, user);
    const [call] = functionCalls(first);
    expect(call?.call_id).toBe("call_weather_1");

    await abortAllDurableObjects();

    const second = await client.responses.create({
      model: "openclaw",
      user,
      previous_response_id: first.id,
      input: [{ type: "function_call_output", call_id: "call_weather_1", output: "sunny, 21" }],
    });
    expect(second.output_text).toBe("It is 21°C in Paris.");
    const requests = await modelRequests(scenario);
    expect(requests).toHaveLength(2);
    expect(JSON.stringify(requests[1]!.body.messages)).toContain("sunny, 21");
  });

  it("ends a run nobody resumes when its wait expires, saying so to the model and the caller", async () => {
    const scenario = newScenario("tool-expire");
    const user = `resp-expire-${crypto.randomUUID()}`;
    const first = await callTheTool(scenario, user, "Sorry, I could not get the weather.");
    const stub = sessionStub(`agent:main:openai-user:${user}`);
    // The wait's deadline moved into the past, as if clientToolTimeoutSeconds had gone by.
    await runInDurableObject(stub, (_instance, state) => {
      const row = state.storage.sql
        .exec<{ run_id: string; options: string }>(
          `SELECT run_id, options FROM runs WHERE state = 'waiting'`,
        )
        .one();
      const options = JSON.parse(row.options) as { clientWait: { since: number; until: number } };
      options.clientWait.until = Date.now() - 1;
      state.storage.sql.exec(
        `UPDATE runs SET options = ? WHERE run_id = ?`,
        JSON.stringify(options),
        row.run_id,
      );
    });
    // The alarm ends it (a pass still finishing the first turn re-plans, and the alarm comes again).
    await waitFor(
      async () => {
        await runDurableObjectAlarm(stub);
        const states = await runInDurableObject(stub, (_instance, state) =>
          state.storage.sql
            .exec<{ state: string }>(`SELECT state FROM runs`)
            .toArray()
            .map((r) => r.state),
        );
        return states.length === 1 && states[0] === "failed";
      },
      10_000,
      "the waiting run to end",
    );

    const late = await post({
      model: "openclaw",
      user,
      previous_response_id: first.id,
      input: [{ type: "function_call_output", call_id: "call_weather_1", output: "too late" }],
    });
    expect(await expectError(late, 400, { code: "function_calls_closed" })).toContain(
      "clientToolTimeoutSeconds",
    );
    // The conversation goes on; the model sees that the call got no result.
    const next = await client.responses.create({
      model: "openclaw",
      user,
      previous_response_id: first.id,
      input: `[scenario:${scenario}] so?`,
    });
    expect(next.output_text).toBe("Sorry, I could not get the weather.");
    const requests = await modelRequests(scenario);
    const [closed] = toolResults(requests.at(-1)!.body.messages);
    expect(closed?.tool_use_id).toBe("call_weather_1");
    expect(closed?.content).toContain("did not send this function call's output");
  });
});
