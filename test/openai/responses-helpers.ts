import { SELF } from "cloudflare:test";
import OpenAI from "openai";
import { expect, inject } from "vitest";

/**
 * What the /v1/responses tests share: the official openai client pointed at the Worker, the fake
 * model server's script and request log (test/fakes/model-server.ts), and a raw SSE reader.
 */

declare module "vitest" {
  interface ProvidedContext {
    fakeModelUrl: string;
  }
}

export const TOKEN = "test-gateway-token";
export const RESPONSES_URL = "https://edgeclaw.test/v1/responses";

export const client = new OpenAI({
  baseURL: "https://edgeclaw.test/v1",
  apiKey: TOKEN,
  maxRetries: 0,
  fetch: (url, init) => SELF.fetch(url, init),
});

export function newScenario(name: string): string {
  return `resp-${name}-${crypto.randomUUID().slice(0, 8)}`;
}

export async function script(scenario: string, steps: Array<Record<string, unknown>>) {
  const response = await fetch(`${inject("fakeModelUrl")}/_control/script`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ scenario, steps }),
  });
  expect(response.status).toBe(200);
}

export interface ModelRequest {
  body: {
    messages: Array<{ role: string; content: unknown; tool_call_id?: string }>;
    tools?: Array<{ type: string; function: { name: string } }>;
  };
}

export async function modelRequests(scenario: string): Promise<ModelRequest[]> {
  const response = await fetch(`${inject("fakeModelUrl")}/_control/requests?scenario=${scenario}`);
  return ((await response.json()) as { requests: ModelRequest[] }).requests;
}

/** POST /v1/responses with the gateway token and a JSON body. */
export function post(body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return SELF.fetch(RESPONSES_URL, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}

export interface SseEvent {
  event: string;
  data: Record<string, unknown> | "[DONE]";
}

/** Splits an SSE body into its events (comments dropped). */
export function parseSse(text: string): SseEvent[] {
  return text
    .split("\n\n")
    .filter((block) => block.trim() && !block.startsWith(":"))
    .map((block) => {
      const lines = block.split("\n");
      const event = lines.find((line) => line.startsWith("event: "))?.slice(7) ?? "";
      const data = lines
        .filter((line) => line.startsWith("data: "))
        .map((line) => line.slice(6))
        .join("\n");
      return {
        event,
        data: data === "[DONE]" ? "[DONE]" : (JSON.parse(data) as SseEvent["data"] & object),
      };
    });
}

/** An OpenAI error body and status. */
export async function expectError(
  response: Response,
  status: number,
  fields: { code?: string; param?: string; type?: string },
): Promise<string> {
  expect(response.status).toBe(status);
  const body = (await response.json()) as {
    error: { message: string; type: string; code: string | null; param: string | null };
  };
  expect(body.error).toMatchObject({ type: "invalid_request_error", ...fields });
  return body.error.message;
}

/** What the session under `user` shows (the web chat's history route): empty when nothing stored. */
export async function historyOf(user: string): Promise<Array<{ role: string; text: string }>> {
  const response = await SELF.fetch(
    `https://edgeclaw.test/v1/edgeclaw/history?user=${encodeURIComponent(user)}`,
    { headers: { authorization: `Bearer ${TOKEN}` } },
  );
  expect(response.status).toBe(200);
  return ((await response.json()) as { data: Array<{ role: string; text: string }> }).data;
}
