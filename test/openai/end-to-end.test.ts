import { SELF } from "cloudflare:test";
import OpenAI from "openai";
import { describe, expect, inject, it } from "vitest";

/**
 * The whole path: the official openai client → the Worker → a real SessionDO → the agent loop →
 * the fake model server (test/fakes/model-server.ts, scripted per scenario) and back.
 */

// What test/setup/global.ts provides (that file is typechecked with the Node config, not this one).
declare module "vitest" {
  interface ProvidedContext {
    fakeModelUrl: string;
    fakeWebUrl: string;
  }
}

const TOKEN = "test-gateway-token";
const fakeModel = inject("fakeModelUrl");

const client = new OpenAI({
  baseURL: "https://edgeclaw.test/v1",
  apiKey: TOKEN,
  maxRetries: 0,
  fetch: (url, init) => SELF.fetch(url, init),
});

type FakeStep = Record<string, unknown> & { type: string };

async function script(scenario: string, steps: FakeStep[]): Promise<void> {
  const response = await fetch(`${fakeModel}/_control/script`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ scenario, steps }),
  });
  expect(response.status).toBe(200);
}

async function modelRequests(
  scenario: string,
): Promise<Array<{ body: { messages: Array<{ role: string; content: unknown }> } }>> {
  const response = await fetch(`${fakeModel}/_control/requests?scenario=${scenario}`);
  return (
    (await response.json()) as {
      requests: Array<{ body: { messages: Array<{ role: string; content: unknown }> } }>;
    }
  ).requests;
}

describe("OpenAI API end to end", () => {
  it("answers a non-streaming request with the model's reply and its usage", async () => {
    await script("oa-e2e-plain", [
      {
        type: "text",
        text: "Hello from the fake model.",
        usage: { input: 40, output: 7, cacheRead: 10 },
      },
    ]);
    const completion = await client.chat.completions.create({
      model: "openclaw/default",
      messages: [{ role: "user", content: "[scenario:oa-e2e-plain] say hello" }],
    });
    expect(completion.choices[0]?.message.content).toBe("Hello from the fake model.");
    expect(completion.choices[0]?.finish_reason).toBe("stop");
    expect(completion.usage).toMatchObject({
      prompt_tokens: 50,
      completion_tokens: 7,
      total_tokens: 57,
    });
    expect(await modelRequests("oa-e2e-plain")).toHaveLength(1);
  });

  it("streams the model's reply as it arrives", async () => {
    await script("oa-e2e-stream", [
      { type: "text", text: "one two three", chunks: ["one", " two", " three"] },
    ]);
    const stream = await client.chat.completions.create({
      model: "openclaw",
      messages: [{ role: "user", content: "[scenario:oa-e2e-stream] count" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const deltas: string[] = [];
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      const content = chunk.choices[0]?.delta.content;
      if (content) deltas.push(content);
      if (chunk.usage) usage = chunk.usage;
    }
    expect(deltas.join("")).toBe("one two three");
    expect(deltas.length).toBeGreaterThan(1);
    expect(usage?.completion_tokens).toBeGreaterThan(0);
  });

  it("keeps the conversation server-side for a stable `user`, and serves it as history", async () => {
    const user = `oa-e2e-user-${crypto.randomUUID()}`;
    await script("oa-e2e-memory", [
      { type: "text", text: "Nice to meet you, Ada." },
      { type: "text", text: "Your name is Ada." },
    ]);
    await client.chat.completions.create({
      model: "openclaw",
      user,
      messages: [{ role: "user", content: "[scenario:oa-e2e-memory] I am Ada." }],
    });
    const second = await client.chat.completions.create({
      model: "openclaw",
      user,
      messages: [{ role: "user", content: "[scenario:oa-e2e-memory] What is my name?" }],
    });
    expect(second.choices[0]?.message.content).toBe("Your name is Ada.");

    const requests = await modelRequests("oa-e2e-memory");
    expect(requests).toHaveLength(2);
    const sentSecond = JSON.stringify(requests[1]!.body.messages);
    expect(sentSecond).toContain("I am Ada.");
    expect(sentSecond).toContain("Nice to meet you, Ada.");

    const history = await SELF.fetch(
      `https://edgeclaw.test/v1/edgeclaw/history?user=${encodeURIComponent(user)}`,
      {
        headers: { authorization: `Bearer ${TOKEN}` },
      },
    );
    expect(history.status).toBe(200);
    const body = (await history.json()) as {
      data: Array<{ role: string; text: string; at: number }>;
    };
    expect(body.data.map((entry) => [entry.role, entry.text.includes("Ada")])).toEqual([
      ["user", true],
      ["assistant", true],
      ["user", false],
      ["assistant", true],
    ]);
    expect(body.data[3]!.text).toBe("Your name is Ada.");
  });

  it("gives each request without `user` a fresh session", async () => {
    await script("oa-e2e-fresh", [
      { type: "text", text: "first" },
      { type: "text", text: "second" },
    ]);
    for (const text of ["remember the number 7", "what number?"]) {
      await client.chat.completions.create({
        model: "openclaw",
        messages: [{ role: "user", content: `[scenario:oa-e2e-fresh] ${text}` }],
      });
    }
    const requests = await modelRequests("oa-e2e-fresh");
    expect(requests).toHaveLength(2);
    expect(JSON.stringify(requests[1]!.body.messages)).not.toContain("remember the number 7");
  });

  it("answers a retry with the same Idempotency-Key without running the model again", async () => {
    await script("oa-e2e-idem", [{ type: "text", text: "exactly once" }]);
    const key = crypto.randomUUID();
    const ask = () =>
      client.chat.completions.create(
        {
          model: "openclaw",
          messages: [{ role: "user", content: "[scenario:oa-e2e-idem] do it once" }],
        },
        { headers: { "Idempotency-Key": key } },
      );
    const first = await ask();
    const retry = await ask();
    expect(first.choices[0]?.message.content).toBe("exactly once");
    expect(retry.choices[0]?.message.content).toBe("exactly once");
    expect(await modelRequests("oa-e2e-idem")).toHaveLength(1);
  });

  it("says plainly when the requested model is not configured", async () => {
    const error = await client.chat.completions
      .create(
        {
          model: "openclaw",
          messages: [{ role: "user", content: "[scenario:oa-e2e-nomodel] hi" }],
        },
        { headers: { "x-openclaw-model": "nosuchprovider/some-model" } },
      )
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    const apiError = error as InstanceType<typeof OpenAI.APIError>;
    expect(apiError.status).toBe(503);
    expect(apiError.code).toBe("not_configured");
    expect(apiError.message).toContain("nosuchprovider");
    expect(await modelRequests("oa-e2e-nomodel")).toHaveLength(0);
  });

  it("shows the web chat the agent's tool activity", async () => {
    const page = `${inject("fakeWebUrl")}/plain.txt`;
    await script("oa-e2e-tools", [
      { type: "tool_calls", calls: [{ name: "web_fetch", arguments: { url: page } }] },
      { type: "text", text: "The page says hello." },
    ]);
    const response = await SELF.fetch("https://edgeclaw.test/v1/chat/completions", {
      method: "POST",
      headers: {
        authorization: `Bearer ${TOKEN}`,
        "content-type": "application/json",
        "x-edgeclaw-events": "tools",
        "x-openclaw-message-channel": "webchat",
      },
      body: JSON.stringify({
        model: "openclaw",
        user: `webchat-${crypto.randomUUID()}`,
        stream: true,
        messages: [{ role: "user", content: "[scenario:oa-e2e-tools] what does the page say?" }],
      }),
    });
    const text = await response.text();
    const tools = [...text.matchAll(/^event: tool\ndata: (.*)$/gm)].map(
      (m) => JSON.parse(m[1]!) as { name: string; phase: string; isError: boolean },
    );
    expect(tools.map((t) => [t.name, t.phase, t.isError])).toEqual([
      ["web_fetch", "start", false],
      ["web_fetch", "end", false],
    ]);
    const content = [...text.matchAll(/^data: (\{.*\})$/gm)]
      .map((m) => JSON.parse(m[1]!) as { choices?: Array<{ delta?: { content?: string } }> })
      .map((chunk) => chunk.choices?.[0]?.delta?.content ?? "")
      .join("");
    expect(content).toBe("The page says hello.");
    expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
  });
});
