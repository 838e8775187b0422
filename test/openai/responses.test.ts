import { describe, expect, it } from "vitest";
import {
  client,
  expectError,
  historyOf,
  modelRequests,
  newScenario,
  parseSse,
  post,
  script,
} from "./responses-helpers.ts";

/**
 * POST /v1/responses end to end: the official openai client (and raw SSE) → the Worker → a real
 * SessionDO → the agent loop → the fake model server, and back.
 */

describe("/v1/responses", () => {
  it("creates a response: the model's answer as an output message, with usage and an id", async () => {
    const scenario = newScenario("create");
    await script(scenario, [
      { type: "text", text: "Hello from the fake model.", usage: { input: 30, output: 6 } },
    ]);
    const response = await client.responses.create({
      model: "openclaw",
      input: `[scenario:${scenario}] say hello`,
      instructions: "Be brief.",
      metadata: { ticket: "42" },
    });
    expect(response.id).toMatch(/^resp_/);
    expect(response.object).toBe("response");
    expect(response.status).toBe("completed");
    expect(response.output_text).toBe("Hello from the fake model.");
    expect(response.output[0]).toMatchObject({ type: "message", role: "assistant" });
    expect(response.metadata).toEqual({ ticket: "42" });
    expect(response.usage).toMatchObject({ input_tokens: 30, output_tokens: 6, total_tokens: 36 });
    const [sent] = await modelRequests(scenario);
    expect(JSON.stringify(sent!.body.messages)).toContain("Be brief.");
  });

  it("streams OpenAI's event sequence with sequence numbers, ending in response.completed and [DONE]", async () => {
    const scenario = newScenario("stream");
    await script(scenario, [
      { type: "text", text: "one two three", chunks: ["one", " two", " three"] },
    ]);
    const response = await post({
      model: "openclaw",
      input: [
        { role: "user", content: [{ type: "input_text", text: `[scenario:${scenario}] count` }] },
      ],
      stream: true,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const events = parseSse(await response.text());
    expect(events.at(-1)?.data).toBe("[DONE]");
    const typed = events.filter((e) => e.data !== "[DONE]");
    const types = typed.map((e) => e.event);
    expect(types.filter((t) => t !== "response.output_text.delta")).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    const data = typed.map((e) => e.data as Record<string, unknown>);
    expect(data.map((d) => d.sequence_number)).toEqual(data.map((_, i) => i));
    for (const d of data) expect(d.type).toBe(typed[data.indexOf(d)]!.event);
    const deltas = data.filter((d) => d.type === "response.output_text.delta").map((d) => d.delta);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join("")).toBe("one two three");
    const completed = data.at(-1)!.response as { id: string; status: string; output: unknown[] };
    expect(completed.status).toBe("completed");
    expect((data[0]!.response as { id: string }).id).toBe(completed.id);
    expect(JSON.stringify(completed.output)).toContain("one two three");

    // The official client reads the same stream.
    const again = newScenario("stream-sdk");
    await script(again, [{ type: "text", text: "streamed via sdk" }]);
    const stream = client.responses.stream({ model: "openclaw", input: `[scenario:${again}] go` });
    const final = await stream.finalResponse();
    expect(final.output_text).toBe("streamed via sdk");
  });

  it("continues the same session with previous_response_id: the model sees the earlier turn", async () => {
    const scenario = newScenario("continue");
    await script(scenario, [
      { type: "text", text: "Nice to meet you, Ada." },
      { type: "text", text: "Your name is Ada." },
    ]);
    const first = await client.responses.create({
      model: "openclaw",
      input: `[scenario:${scenario}] I am Ada.`,
    });
    const second = await client.responses.create({
      model: "openclaw",
      input: `[scenario:${scenario}] What is my name?`,
      previous_response_id: first.id,
    });
    expect(second.output_text).toBe("Your name is Ada.");
    expect(second.previous_response_id).toBe(first.id);
    const requests = await modelRequests(scenario);
    expect(requests).toHaveLength(2);
    const sent = JSON.stringify(requests[1]!.body.messages);
    expect(sent).toContain("I am Ada.");
    expect(sent).toContain("Nice to meet you, Ada.");

    // Only the latest response continues: the transcript is one line, not a tree.
    const fork = await post({
      model: "openclaw",
      input: `[scenario:${scenario}] fork`,
      previous_response_id: first.id,
    });
    await expectError(fork, 400, { code: "previous_response_superseded" });
    expect(await modelRequests(scenario)).toHaveLength(2);
  });

  it("refuses an unknown, forged or another user's previous_response_id, and changes nothing", async () => {
    const scenario = newScenario("forged");
    const user = `resp-user-${crypto.randomUUID()}`;
    await script(scenario, [
      { type: "text", text: "first answer" },
      { type: "text", text: "still the same conversation" },
    ]);
    const first = await client.responses.create({
      model: "openclaw",
      user,
      input: `[scenario:${scenario}] hello`,
    });
    const ask = (previous: string, extra: Record<string, unknown> = {}) =>
      post({
        model: "openclaw",
        input: `[scenario:${scenario}] again`,
        previous_response_id: previous,
        ...extra,
      });

    await expectError(await ask("resp_nonsense"), 404, {
      code: "previous_response_not_found",
      param: "previous_response_id",
    });
    // The right session, a random id in it: the session holds no such response.
    const forged = `${first.id.slice(0, first.id.lastIndexOf("_"))}_${"0".repeat(32)}`;
    await expectError(await ask(forged, { user }), 404, { code: "previous_response_not_found" });
    // The real id, asked for by another user (or by no user at all).
    await expectError(await ask(first.id, { user: `${user}-other` }), 404, {
      code: "previous_response_not_found",
    });
    await expectError(await ask(first.id), 404, { code: "previous_response_not_found" });
    expect(await modelRequests(scenario)).toHaveLength(1);
    expect(await historyOf(user)).toHaveLength(2);

    // Nothing changed: the real id still continues the conversation.
    const next = await client.responses.create({
      model: "openclaw",
      user,
      input: `[scenario:${scenario}] and now?`,
      previous_response_id: first.id,
    });
    expect(next.output_text).toBe("still the same conversation");
  });

  it("refuses to continue a response whose conversation was reset since (/new)", async () => {
    const scenario = newScenario("reset");
    const user = `resp-reset-${crypto.randomUUID()}`;
    await script(scenario, [{ type: "text", text: "before the reset" }]);
    const first = await client.responses.create({
      model: "openclaw",
      user,
      input: `[scenario:${scenario}] hello`,
    });
    // The same `user` is the same session on chat completions, where /new starts it over.
    await client.chat.completions.create({
      model: "openclaw",
      user,
      messages: [{ role: "user", content: "/new" }],
    });
    const after = await post({
      model: "openclaw",
      user,
      input: `[scenario:${scenario}] still there?`,
      previous_response_id: first.id,
    });
    await expectError(after, 400, { code: "previous_response_reset" });
    expect(await modelRequests(scenario)).toHaveLength(1);
  });

  it("answers a retry with the same Idempotency-Key with the same response, without running again", async () => {
    const scenario = newScenario("idem");
    await script(scenario, [{ type: "text", text: "exactly once" }]);
    const key = crypto.randomUUID();
    const ask = () =>
      client.responses.create(
        { model: "openclaw", input: `[scenario:${scenario}] once` },
        { headers: { "Idempotency-Key": key } },
      );
    const first = await ask();
    const retry = await ask();
    expect(retry.id).toBe(first.id);
    expect(retry.output_text).toBe("exactly once");
    expect(await modelRequests(scenario)).toHaveLength(1);
  });

  it("refuses bad input with a 400 in OpenAI's shape and stores nothing", async () => {
    const scenario = newScenario("bad");
    const user = `resp-bad-${crypto.randomUUID()}`;
    const input = `[scenario:${scenario}] hi`;
    const cases: Array<[Record<string, unknown>, string | undefined, string | undefined]> = [
      [{ input, conversation: "conv_1" }, "unsupported_parameter", "conversation"],
      [{ input, tools: [{ type: "web_search" }] }, undefined, "tools.0"],
      [{ input, tool_choice: "required" }, undefined, "tool_choice"],
      [{ input, background: true }, undefined, "background"],
      [{}, undefined, "input"],
      [
        { input: [{ role: "user", content: [{ type: "input_file", file_id: "f" }] }] },
        "unsupported_content",
        "input.0.content.0",
      ],
      [
        {
          input: [
            {
              role: "user",
              content: [{ type: "input_image", image_url: "https://example.com/a.png" }],
            },
          ],
        },
        "image_url_not_allowed",
        "input.0.content.0",
      ],
      [
        { input: [{ type: "function_call_output", call_id: "call_1", output: "{}" }] },
        "no_function_calls",
        "input",
      ],
    ];
    for (const [body, code, param] of cases) {
      const response = await post({ model: "openclaw", user, ...body });
      await expectError(response, 400, { ...(code ? { code } : {}), ...(param ? { param } : {}) });
    }
    expect(await modelRequests(scenario)).toHaveLength(0);
    expect(await historyOf(user)).toEqual([]);
  });
});
