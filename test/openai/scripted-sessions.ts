import { env, createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import type { RoutedEvent, RunEvent } from "../../durable-objects/session-api.ts";
import worker from "../../workers/index.ts";
import type { Env } from "../../workers/env.ts";

/**
 * Stands in for the SESSIONS namespace at the SessionDO RPC boundary (`chat`, `history`), so the
 * HTTP layer can be tested on its own: what it sends to the session, and how it turns a session's
 * RunEvents into OpenAI responses. End-to-end tests against the real SessionDO live beside these.
 */
export interface ScriptedSessions {
  namespace: Env["SESSIONS"];
  /** Every chat() call, in order, with the session key the stub was obtained for. */
  chats: Array<{ sessionKey: string; event: RoutedEvent }>;
  historyCalls: string[];
}

export function scriptedSessions(
  reply: (event: RoutedEvent) => RunEvent[] | string,
  history: (sessionKey: string) => unknown = () => [],
): ScriptedSessions {
  const chats: ScriptedSessions["chats"] = [];
  const historyCalls: string[] = [];
  const namespace = {
    idFromName: (name: string) => ({ name }),
    get: (id: { name: string }) => ({
      async chat(event: RoutedEvent) {
        chats.push({ sessionKey: id.name, event });
        const script = reply(event);
        const ndjson =
          typeof script === "string"
            ? script
            : script.map((e) => `${JSON.stringify(e)}\n`).join("");
        return new Response(ndjson).body!;
      },
      async history() {
        historyCalls.push(id.name);
        return history(id.name);
      },
    }),
  } as unknown as Env["SESSIONS"];
  return { namespace, chats, historyCalls };
}

export const TOKEN = "test-gateway-token";

/** Calls the Worker's fetch handler with the given bindings merged over the test env. */
export async function callWorker(request: Request, overrides: Partial<Env>): Promise<Response> {
  const ctx = createExecutionContext();
  const response = await worker.fetch(request, { ...env, ...overrides } as Env, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

export function configJson(config: Record<string, unknown>): string {
  return JSON.stringify({ gateway: { auth: { token: TOKEN } }, ...config });
}

export const usage = { inputTokens: 12, outputTokens: 5, cacheReadTokens: 3, cacheWriteTokens: 0 };

export function answer(text: string, deltas = [text]): RunEvent[] {
  return [
    { type: "queued" },
    { type: "run-started", runId: "run-1" },
    ...deltas.map((d): RunEvent => ({ type: "text-delta", text: d })),
    { type: "done", runId: "run-1", text, usage, modelRef: "fake/scripted" },
  ];
}
