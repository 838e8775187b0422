import { SELF, env, listDurableObjectIds } from "cloudflare:test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Env } from "../../workers/env.ts";
import { TOKEN, answer, callWorker, configJson, scriptedSessions } from "./scripted-sessions.ts";

/**
 * Bad input gets a clear OpenAI-shaped error and changes nothing: the requests below go through
 * the real Worker and the real SESSIONS namespace, and afterwards no new session object exists.
 */

const URL_CHAT = "https://edgeclaw.test/v1/chat/completions";
const good = { model: "openclaw", messages: [{ role: "user", content: "hi" }] };
let ipCounter = 0;

function post(body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return SELF.fetch(URL_CHAT, {
    method: "POST",
    headers: {
      authorization: `Bearer ${TOKEN}`,
      "content-type": "application/json",
      // A fresh client address per request keeps failed-auth counting out of unrelated tests.
      "cf-connecting-ip": `198.51.100.${++ipCounter}`,
      ...headers,
    },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

async function expectError(
  response: Response,
  status: number,
  fields: { code?: string; param?: string; type?: string },
) {
  expect(response.status).toBe(status);
  const body = (await response.json()) as {
    error: { message: string; type: string; code: string | null; param: string | null };
  };
  expect(typeof body.error.message).toBe("string");
  expect(body.error.message.length).toBeGreaterThan(0);
  expect(body.error).toMatchObject(fields);
  return body.error;
}

const sessionIds = async () =>
  (await listDurableObjectIds((env as unknown as Env).SESSIONS)).map(String);
// Files of a shard share one workerd (scripts/test-workerd.ts): the objects earlier files made are
// theirs. This file's requests may add none.
let before: string[] = [];
beforeAll(async () => {
  before = await sessionIds();
});

afterAll(async () => {
  // Nothing above may have created (and so stored anything in) a session object.
  expect((await sessionIds()).filter((id) => !before.includes(id))).toEqual([]);
});

describe("authentication", () => {
  it("refuses a request without a token with 401", async () => {
    const response = await post(good, { authorization: "" });
    expect(response.headers.get("www-authenticate")).toMatch(/^Bearer/);
    await expectError(response, 401, { code: "missing_token", type: "authentication_error" });
  });

  it("refuses a wrong token with 401", async () => {
    await expectError(await post(good, { authorization: "Bearer not-the-token" }), 401, {
      code: "invalid_token",
    });
    await expectError(await post(good, { authorization: `Bearer ${TOKEN}x` }), 401, {
      code: "invalid_token",
    });
  });

  it("protects /v1/models too", async () => {
    const response = await SELF.fetch("https://edgeclaw.test/v1/models", {
      headers: { "cf-connecting-ip": "198.51.100.250" },
    });
    await expectError(response, 401, { code: "missing_token" });
  });

  it("locks a client out with 429 and Retry-After after 10 failed attempts, even with the right token", async () => {
    const ip = { "cf-connecting-ip": "203.0.113.77" };
    for (let i = 0; i < 10; i++) {
      await expectError(await post(good, { ...ip, authorization: `Bearer guess-${i}` }), 401, {
        code: "invalid_token",
      });
    }
    const locked = await post(good, ip);
    const retryAfter = Number(locked.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(300);
    await expectError(locked, 429, { code: "rate_limited", type: "rate_limit_error" });
    // Another client is not affected (it fails on the body, after auth passed).
    await expectError(await post("{", { "cf-connecting-ip": "203.0.113.78" }), 400, {
      code: "invalid_json",
    });
  });
});

describe("request validation", () => {
  it("rejects malformed JSON with 400", async () => {
    await expectError(await post("{not json"), 400, {
      code: "invalid_json",
      type: "invalid_request_error",
    });
    await expectError(await post(""), 400, { type: "invalid_request_error" });
  });

  it.each([
    [{ ...good, messages: undefined }, "messages"],
    [{ ...good, messages: [] }, "messages"],
    [{ ...good, messages: [{ role: "robot", content: "x" }] }, "messages.0.role"],
    [{ ...good, messages: [{ role: "user", content: 5 }] }, "messages.0.content"],
    [{ ...good, temperature: 3 }, "temperature"],
    [{ ...good, top_p: 1.5 }, "top_p"],
    [{ ...good, presence_penalty: -2.5 }, "presence_penalty"],
    [{ ...good, seed: 1.5 }, "seed"],
    [{ ...good, max_tokens: 0 }, "max_tokens"],
    [{ ...good, stop: ["a", "b", "c", "d", "e"] }, "stop"],
    [{ ...good, stop: [""] }, "stop.0"],
    [{ ...good, n: 2 }, "n"],
    [{ ...good, stream: "yes" }, "stream"],
    [{ ...good, tools: {} }, "tools"],
    [{ ...good, tools: [{ type: "function", function: {} }] }, "tools.0.function.name"],
    [{ ...good, tool_choice: { type: "allowed_tools", allowed_tools: {} } }, "tool_choice"],
  ])("rejects %j naming `%s`", async (body, param) => {
    const error = await expectError(await post(body), 400, {
      type: "invalid_request_error",
      param,
    });
    expect(error.message).toContain(param);
  });

  it("says plainly that client tools and tool results are not supported, and refuses an image that is not one", async () => {
    const tool = { type: "function", function: { name: "lookup", parameters: { type: "object" } } };
    await expectError(await post({ ...good, tools: [tool] }), 400, {
      code: "unsupported_client_tools",
      param: "tools",
    });
    await expectError(
      await post({
        ...good,
        messages: [
          { role: "user", content: "a" },
          { role: "tool", tool_call_id: "t1", content: "r" },
        ],
      }),
      400,
      { code: "unsupported_client_tools", param: "messages.1.role" },
    );
    await expectError(
      await post({
        ...good,
        messages: [
          {
            role: "user",
            content: [{ type: "image_url", image_url: { url: "data:image/png;base64,AA" } }],
          },
        ],
      }),
      400,
      { code: "invalid_image", param: "messages.0.content.0" },
    );
  });

  it("requires a user message with text", async () => {
    await expectError(await post({ ...good, messages: [{ role: "system", content: "s" }] }), 400, {
      code: "missing_user_message",
    });
    await expectError(await post({ ...good, messages: [{ role: "user", content: "   " }] }), 400, {
      param: "messages.0.content",
    });
  });

  it.each([
    "subagent:abc",
    "cron:nightly",
    "acp:1",
    "agent:main:subagent:x",
    "agent:main:cron:job",
  ])("rejects the reserved session key %s with 400", async (key) => {
    await expectError(await post(good, { "x-openclaw-session-key": key }), 400, {
      code: "reserved_session_key",
      param: "x-openclaw-session-key",
    });
  });

  it("rejects a malformed x-openclaw-model and an unknown message channel", async () => {
    await expectError(await post(good, { "x-openclaw-model": "gpt-4o" }), 400, {
      param: "x-openclaw-model",
    });
    await expectError(await post(good, { "x-openclaw-message-channel": "slack" }), 400, {
      param: "x-openclaw-message-channel",
    });
  });
});

describe("agent targets", () => {
  it("answers 404 for an unknown agent in model or header, and for provider model names", async () => {
    await expectError(await post({ ...good, model: "openclaw/nope" }), 404, {
      code: "agent_not_found",
      param: "model",
    });
    await expectError(await post({ ...good, model: "agent:nope" }), 404, {
      code: "agent_not_found",
    });
    await expectError(await post(good, { "x-openclaw-agent-id": "nope" }), 404, {
      param: "x-openclaw-agent-id",
    });
    await expectError(await post({ ...good, model: "gpt-4o" }), 404, {
      code: "model_not_found",
      param: "model",
    });
    await expectError(await post(good, { "x-openclaw-session-key": "agent:nope:x" }), 404, {
      code: "agent_not_found",
    });
    const response = await SELF.fetch("https://edgeclaw.test/v1/models/openclaw%2Fnope", {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    await expectError(response, 404, { code: "agent_not_found" });
  });
});

describe("limits and switches", () => {
  const small = configJson({
    gateway: {
      auth: { token: TOKEN },
      http: { endpoints: { chatCompletions: { maxBodyBytes: 1024 } } },
    },
  });

  it("refuses a body over maxBodyBytes with 413, by Content-Length and while streaming", async () => {
    const sessions = scriptedSessions(() => answer("never"));
    const big = JSON.stringify({
      ...good,
      messages: [{ role: "user", content: "x".repeat(2000) }],
    });
    const declared = await callWorker(
      new Request(URL_CHAT, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}` },
        body: big,
      }),
      { SESSIONS: sessions.namespace, EDGECLAW_CONFIG: small },
    );
    await expectError(declared, 413, { code: "request_too_large" });

    const bytes = new TextEncoder().encode(big);
    const chunked = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < bytes.length; i += 256) controller.enqueue(bytes.slice(i, i + 256));
        controller.close();
      },
    });
    const streamed = await callWorker(
      new Request(URL_CHAT, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}` },
        body: chunked,
      }),
      { SESSIONS: sessions.namespace, EDGECLAW_CONFIG: small },
    );
    await expectError(streamed, 413, { code: "request_too_large" });
    expect(sessions.chats).toHaveLength(0);
  });

  it("serves nothing when gateway.http.endpoints.chatCompletions.enabled is false", async () => {
    const sessions = scriptedSessions(() => answer("never"));
    const off = configJson({
      gateway: {
        auth: { token: TOKEN },
        http: { endpoints: { chatCompletions: { enabled: false } } },
      },
    });
    const bindings = { SESSIONS: sessions.namespace, EDGECLAW_CONFIG: off };
    const auth = { authorization: `Bearer ${TOKEN}` };
    const chat = await callWorker(
      new Request(URL_CHAT, { method: "POST", headers: auth, body: JSON.stringify(good) }),
      bindings,
    );
    await expectError(chat, 404, { code: "endpoint_disabled" });
    await expectError(
      await callWorker(new Request("https://edgeclaw.test/v1/models", { headers: auth }), bindings),
      404,
      {
        code: "endpoint_disabled",
      },
    );
    expect((await callWorker(new Request("https://edgeclaw.test/"), bindings)).status).toBe(404);
    expect(sessions.chats).toHaveLength(0);
  });

  it("lets everyone in with gateway.auth.mode none", async () => {
    const sessions = scriptedSessions(() => answer("open"));
    const open = JSON.stringify({ gateway: { auth: { mode: "none" } } });
    const response = await callWorker(
      new Request(URL_CHAT, { method: "POST", body: JSON.stringify(good) }),
      { SESSIONS: sessions.namespace, EDGECLAW_CONFIG: open },
    );
    expect(response.status).toBe(200);
    expect(sessions.chats).toHaveLength(1);
  });

  it("fails closed when no gateway token is configured anywhere", async () => {
    const response = await callWorker(
      new Request(URL_CHAT, {
        method: "POST",
        headers: { authorization: "Bearer anything" },
        body: JSON.stringify(good),
      }),
      {
        EDGECLAW_CONFIG: "{}",
        EDGECLAW_GATEWAY_TOKEN: undefined,
        OPENCLAW_GATEWAY_TOKEN: undefined,
      },
    );
    await expectError(response, 401, { code: "auth_not_configured" });
  });

  it("accepts the token from EDGECLAW_GATEWAY_TOKEN when the config names none", async () => {
    const sessions = scriptedSessions(() => answer("env token"));
    const response = await callWorker(
      new Request("https://edgeclaw.test/v1/models", {
        headers: { authorization: "Bearer from-env" },
      }),
      { SESSIONS: sessions.namespace, EDGECLAW_CONFIG: "{}", EDGECLAW_GATEWAY_TOKEN: "from-env" },
    );
    expect(response.status).toBe(200);
  });
});
