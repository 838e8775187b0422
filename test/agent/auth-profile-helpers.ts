import { runInDurableObject } from "cloudflare:test";
import { expect } from "vitest";
import type { ProfileUsage } from "../../functions/agent/auth-profiles/cooldown.ts";
import { sessionWithConfig } from "../durable-objects/budget-helpers.ts";
import { collectRunEvents, webchatEvent } from "../durable-objects/helpers.ts";
import { fakeModelUrl, type recorded, testEnv } from "./model-helpers.ts";

/**
 * A deployment with two API-key profiles (`<provider>:first`, `<provider>:second`, in that
 * auth.order) of a provider of its own on the fake model server, whose keys the fake can be told
 * to refuse (POST /_control/key-error); and the gateway's AuthProfileStateDO, read and aged.
 */

export interface Rig {
  provider: string;
  first: string;
  second: string;
  keys: { first: string; second: string };
  /** The config as JSON and the Worker secrets the profiles read. */
  config: string;
  secrets: Record<string, string>;
  session(name: string): Promise<(text: string) => Promise<string>>;
}

export function rig(options: { fallbacks?: string[] } = {}): Rig {
  const provider = `rot${crypto.randomUUID().slice(0, 8)}`;
  const keys = {
    first: `sk-test-first-${crypto.randomUUID()}`,
    second: `sk-test-second-${crypto.randomUUID()}`,
  };
  const base = JSON.parse(testEnv.EDGECLAW_CONFIG ?? "{}");
  const config = JSON.stringify({
    ...base,
    agents: {
      ...base.agents,
      defaults: {
        ...base.agents.defaults,
        model: { primary: `${provider}/claude-test`, fallbacks: options.fallbacks ?? [] },
      },
    },
    models: {
      ...base.models,
      providers: {
        ...base.models.providers,
        [provider]: {
          baseUrl: fakeModelUrl(),
          api: "anthropic-messages",
          models: [{ id: "claude-test", cost: { input: 1, output: 1 } }],
        },
      },
    },
    auth: {
      profiles: {
        [`${provider}:first`]: { provider, mode: "api_key" },
        [`${provider}:second`]: { provider, mode: "api_key" },
      },
      order: { [provider]: [`${provider}:first`, `${provider}:second`] },
    },
  });
  const secrets = {
    [`${provider.toUpperCase()}_API_KEY_FIRST`]: keys.first,
    [`${provider.toUpperCase()}_API_KEY_SECOND`]: keys.second,
  };
  return {
    provider,
    first: `${provider}:first`,
    second: `${provider}:second`,
    keys,
    config,
    secrets,
    async session(name) {
      const key = `agent:main:${name}-${crypto.randomUUID().slice(0, 8)}`;
      const stub = await sessionWithConfig(key, config, secrets);
      return async (text) => {
        const events = await collectRunEvents(await stub.chat(webchatEvent(key, text)));
        // Notices (a fallback's), then the answer or the one error the user is shown.
        return events
          .flatMap((event) =>
            event.type === "notice" || event.type === "done"
              ? [event.text]
              : event.type === "error"
                ? [event.message]
                : [],
          )
          .join("\n");
      };
    },
  };
}

export async function keyError(key: string, step: Record<string, unknown> | null): Promise<void> {
  const res = await fetch(`${fakeModelUrl()}/_control/key-error`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ key, step }),
  });
  expect(res.status, await res.clone().text()).toBe(200);
}

export const stateStub = () =>
  testEnv.AUTH_PROFILES.get(testEnv.AUTH_PROFILES.idFromName("global"));

export async function usageOf(id: string): Promise<ProfileUsage | undefined> {
  return (await stateStub().read([id]))[id];
}

/** Moves a profile's cooldown and disable window into the past: its time is up. */
export async function endCooldown(id: string): Promise<void> {
  await runInDurableObject(stateStub(), async (_instance, state) => {
    const key = `profile:${id}`;
    const usage = await state.storage.get<ProfileUsage>(key);
    if (!usage) throw new Error(`no state for ${id}`);
    await state.storage.put(key, {
      ...usage,
      ...(usage.cooldownUntil ? { cooldownUntil: Date.now() - 1 } : {}),
      ...(usage.disabledUntil ? { disabledUntil: Date.now() - 1 } : {}),
    });
  });
}

export function keysUsed(requests: Awaited<ReturnType<typeof recorded>>): string[] {
  return requests.map((request) => request.headers["x-api-key"] ?? "");
}
