import { env } from "cloudflare:test";
import { expect } from "vitest";
import { configFromEnv } from "../../functions/channels/gateway-config.ts";
import type { EdgeclawConfig } from "../../functions/config/schema.ts";
import type { Message } from "../../functions/agent/types.ts";
import type { Env } from "../../workers/env.ts";

/**
 * Shared by the model tests: the suite's config (providers fakeanthropic / fakeopenai /
 * fakegoogle / fakeresponses on the fake
 * model server) and the server's control API. Steps are typed loosely here because the server's
 * own types live in Node-side code; the server validates every step with zod and answers 400.
 */

/** `cloudflare:test` types `env` as the (empty) Cloudflare.Env; these are the Worker's real bindings. */
export const testEnv = env as unknown as Env;

export const suiteConfig: EdgeclawConfig = configFromEnv(testEnv);

export function fakeModelUrl(): string {
  const url = suiteConfig.models.providers.fakeanthropic?.baseUrl;
  if (!url)
    throw new Error(
      "test config has no fakeanthropic provider: is the fake model server in globalSetup?",
    );
  return url;
}

export type FakeStep = { type: string } & Record<string, unknown>;

let counter = 0;
/** A scenario id no other test (or test file) uses. */
export function newScenario(name: string): string {
  counter++;
  return `${name}-${counter}-${crypto.randomUUID().slice(0, 8)}`;
}

export function userSays(scenario: string, text: string): Message {
  return { role: "user", content: `${text} [scenario:${scenario}]` };
}

export async function script(scenario: string, steps: FakeStep[]): Promise<void> {
  const res = await fetch(`${fakeModelUrl()}/_control/script`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ scenario, steps }),
  });
  expect(res.status, await res.clone().text()).toBe(200);
}

export interface Recorded {
  api: "anthropic" | "openai" | "google" | "responses";
  path: string;
  headers: Record<string, string>;
  // biome-ignore lint/suspicious/noExplicitAny: tests read the recorded JSON body at any depth.
  body: Record<string, any>;
}

export async function recorded(scenario: string): Promise<Recorded[]> {
  const res = await fetch(
    `${fakeModelUrl()}/_control/requests?scenario=${encodeURIComponent(scenario)}`,
  );
  const json = (await res.json()) as { requests: Recorded[] };
  return json.requests;
}

/** A sleep that returns at once and remembers what it was asked to wait. */
export function recordingSleep(): { sleep: (ms: number) => Promise<void>; waits: number[] } {
  const waits: number[] = [];
  return { waits, sleep: async (ms) => void waits.push(ms) };
}
