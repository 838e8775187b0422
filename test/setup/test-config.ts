/**
 * The edgeclaw.json5 the workerd test suite runs with, pointed at the loopback fakes. It goes to the
 * Worker as the EDGECLAW_CONFIG binding, exactly as `npm run dev` passes a user's config.
 */
import type { CompanionTestKey } from "../../scripts/lib/channel-test-kit.ts";

export interface FakeAddresses {
  [name: string]: string;
}

/** A channel's part of the test config, from its test kit (functions/channels/<id>/test-kit.ts). */
export interface ChannelTestBlock {
  channel: string;
  block: Record<string, unknown>;
  companionKeys?: CompanionTestKey[];
}

export function buildTestConfig(
  fakes: FakeAddresses,
  channels: ChannelTestBlock[] = [],
): Record<string, unknown> {
  return {
    // publicUrl: the signed media links LINE and Twilio fetch (workers/media.ts). Nothing listens
    // there (the suite's Worker has no port), so a fake's own fetch of a link fails at once; the
    // tests fetch the links through SELF instead.
    // /v1/responses is off by default (as in OpenClaw); test/openai/responses*.test.ts use it.
    gateway: {
      auth: { token: "test-gateway-token" },
      publicUrl: "https://127.0.0.1:9",
      http: { endpoints: { responses: { enabled: true } } },
    },
    // The signed internal ingress's keys (ingressKeys below).
    companion: {
      // The sandbox tests' real local backend (test/setup/global.ts starts it): exec over the
      // signed channel Worker → companion (POST /v1/sandbox), as `npm run dev` runs it.
      ...(fakes.sandbox
        ? {
            url: fakes.sandbox,
            outboundKeys: [
              {
                id: TEST_SANDBOX_KEY.id,
                secret: { source: "env", id: "TEST_SANDBOX_OUTBOUND_SECRET" },
              },
            ],
          }
        : {}),
      ingressKeys: ingressKeys(channels),
      // test/durable-objects/companion-container-keeper.test.ts: short restart delays so the real alarms fire within the test.
      container: {
        workerUrl: "https://edgeclaw.test",
        restartMinMs: 1000,
        restartMaxMs: 4000,
        crashLoopStops: 3,
        crashLoopWindowMs: 60_000,
      },
    },
    // GET /metrics (test/metrics/): a scrape-only token, and counters handed over without delay.
    diagnostics: {
      metrics: {
        token: { source: "env", id: "TEST_METRICS_TOKEN" },
        coalesceMs: 20,
        flushIntervalMs: 0,
      },
    },
    // Inbound hooks (test/automation/hooks.test.ts): their own token, one mapping with templates.
    hooks: {
      enabled: true,
      token: { source: "env", id: "TEST_HOOKS_TOKEN" },
      mappings: [
        {
          match: { path: "gmail" },
          action: "agent",
          name: "Gmail",
          messageTemplate: "From: {{messages[0].from}}\nSubject: {{messages[0].subject}}",
        },
      ],
    },
    ...(fakes.model ? modelProviders(fakes.model) : {}),
    // memory_search embeds through the fake model server's deterministic /v1/embeddings.
    ...(fakes.model
      ? {
          memory: {
            search: {
              provider: "openai",
              baseUrl: `${fakes.model}/v1`,
              apiKey: "test-embed-key",
              model: "fake-embed",
            },
          },
        }
      : {}),
    // The browser refuses loopback too; the test pages are served by the fake web server, so its
    // host is the allowance (test/browser/ proves that without it the same page is refused).
    ...(fakes.web
      ? { browser: { ssrfPolicy: { allowedHostnames: [new URL(fakes.web).hostname] } } }
      : {}),
    // web_fetch refuses loopback; the fake web server's host is the one exception the suite allows.
    // Host names are resolved by the fake DoH resolver, never on the internet.
    ...(fakes.web || fakes.doh
      ? {
          tools: {
            web: {
              fetch: {
                ...(fakes.web
                  ? { ssrfPolicy: { allowedHostnames: [new URL(fakes.web).hostname] } }
                  : {}),
                ...(fakes.doh ? { dnsResolverUrl: `${fakes.doh}/dns-query` } : {}),
              },
            },
            // Voice notes: the fake model server's OpenAI /audio/transcriptions first, then Workers
            // AI whisper through the fake AI binding (test/fakes/speech.ts); images described by
            // claude-test for a text-only model.
            ...(fakes.model
              ? {
                  media: {
                    models: [
                      { provider: "fakeopenai", model: "whisper-1", capabilities: ["audio"] },
                      { provider: "workers-ai", capabilities: ["audio"] },
                      // Describes images for a model without image input (claude-small).
                      { provider: "fakeanthropic", model: "claude-test", capabilities: ["image"] },
                    ],
                  },
                }
              : {}),
          },
        }
      : {}),
    // Voice replies only where a reply asks for one ([[tts]]): the fake model server's OpenAI
    // /audio/speech (test/fakes/text-to-speech.ts), with fakeopenai's base URL and key.
    ...(fakes.model
      ? {
          tts: {
            auto: "tagged",
            provider: "fakeopenai",
            providers: { fakeopenai: { model: "tts-test" } },
          },
        }
      : {}),
    channels: {
      ...Object.fromEntries(channels.map(({ channel, block }) => [channel, block])),
      ...(fakes.relay ? { relay: relayTestChannel(fakes.relay) } : {}),
    },
  };
}

/**
 * The signed internal ingress's keys: k1 for the test-only channels (test/workers/internal-ingress.test.ts),
 * joined by the channels whose test kits name it, and the keys the kits declare.
 */
function ingressKeys(channels: ChannelTestBlock[]): Array<Record<string, unknown>> {
  const keys = new Map<string, Record<string, unknown> & { channels: string[] }>([
    [
      "k1",
      {
        id: "k1",
        secret: { source: "env", id: "EDGECLAW_COMPANION_INGRESS_SECRET" },
        channels: ["testchan", "metricschan"],
      },
    ],
  ]);
  for (const { channel, companionKeys = [] } of channels)
    for (const { id, secretEnv, accounts, deployment } of companionKeys) {
      const known = keys.get(id);
      if (known) {
        known.channels.push(channel);
        continue;
      }
      if (!secretEnv)
        throw new Error(`${channel}'s test kit joins companion key ${id}, which no one declared`);
      keys.set(id, {
        id,
        secret: { source: "env", id: secretEnv },
        channels: [channel],
        ...(accounts ? { accounts } : {}),
        ...(deployment ? { deployment } : {}),
      });
    }
  return [...keys.values()];
}

/**
 * Two providers on the fake model server (test/fakes/model-server.ts), one per wire format. Tests
 * script it per scenario by putting `[scenario:<id>]` in a user message.
 */
export const TEST_PRIMARY_MODEL = "fakeanthropic/claude-test";
export const TEST_OPENAI_MODEL = "fakeopenai/gpt-test";
export const TEST_GEMINI_MODEL = "fakegoogle/gemini-3.1-pro-preview";
export const TEST_RESPONSES_MODEL = "fakeresponses/gpt-test";

function modelProviders(fakeModelUrl: string): Record<string, unknown> {
  return {
    agents: {
      defaults: { model: { primary: TEST_PRIMARY_MODEL } },
      // test/sandbox/: an agent whose commands run in the real bubblewrap sandbox, one whose
      // commands run in the sandbox container (SandboxDO over the loopback container engine,
      // test/fakes/container-engine.ts); main has none.
      list: [
        { id: "main", default: true },
        { id: "sandboxed", sandbox: { backend: "companion", mode: "all", scope: "session" } },
        { id: "contained", sandbox: { backend: "container", mode: "all", scope: "session" } },
        // test/sandbox/approvals.test.ts: its own approval policy (agents.list[].tools.exec).
        {
          id: "asker",
          sandbox: { backend: "companion", mode: "all", scope: "session" },
          tools: { exec: { mode: "ask", allowlist: ["ls"] } },
        },
        // test/compute-env/: AcaClaw's computing environment over the conda stand-in bound at
        // /opt/conda in the bubblewrap sandbox (test/fakes/conda/), its fixture channel only.
        {
          id: "scientist",
          sandbox: { backend: "companion", mode: "all", scope: "agent" },
          computeEnv: { enabled: true, channels: ["file:///opt/conda/channel"] },
        },
        // test/sandbox/budget.test.ts: 2 s of sandbox time a day (budgets.agents.metered).
        { id: "metered", sandbox: { backend: "companion", mode: "all", scope: "session" } },
      ],
    },
    budgets: { agents: { metered: { day: { sandboxSeconds: 2 } } } },
    models: {
      providers: {
        fakeanthropic: {
          baseUrl: fakeModelUrl,
          apiKey: "test-anthropic-key",
          api: "anthropic-messages",
          models: [
            {
              id: "claude-test",
              input: ["text", "image"],
              cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
            },
            // A small window, so memory-flush and compaction thresholds are reachable in a test.
            { id: "claude-small", contextWindow: 30_000 },
          ],
        },
        fakeopenai: {
          baseUrl: `${fakeModelUrl}/v1`,
          apiKey: "test-openai-key",
          api: "openai-completions",
          models: [
            {
              id: "gpt-test",
              input: ["text", "image"],
              cost: { input: 1.25, output: 10, cacheRead: 0.125, cacheWrite: 0 },
            },
          ],
        },
        // Google's Gemini API and OpenAI's Responses API on the same fake (gemini-wire.ts,
        // responses-wire.ts), under OpenClaw's api names.
        fakegoogle: {
          baseUrl: `${fakeModelUrl}/v1beta`,
          apiKey: "test-google-key",
          api: "google-generative-ai",
          models: [
            {
              id: "gemini-3.1-pro-preview",
              input: ["text", "image"],
              cost: { input: 2, output: 12, cacheRead: 0.2, cacheWrite: 0 },
            },
            { id: "gemini-3-flash-preview", input: ["text", "image"] },
            { id: "gemini-2.5-flash" },
            { id: "gemini-2.5-pro" },
          ],
        },
        fakeresponses: {
          baseUrl: `${fakeModelUrl}/v1`,
          apiKey: "test-openai-key",
          api: "openai-responses",
          models: [
            {
              id: "gpt-test",
              input: ["text", "image"],
              reasoning: true,
              cost: { input: 1.25, output: 10, cacheRead: 0.125, cacheWrite: 0 },
            },
          ],
        },
      },
    },
  };
}

/**
 * `channels.relay`: the test-only channel (test/channels/relay/, registered by
 * test/setup/register-channels.ts) on the fake relay API. Open DMs and groups, no mention needed.
 */
export const TEST_RELAY = { secret: "test-relay-secret", token: "test-relay-token" } as const;

function relayTestChannel(fakeRelayUrl: string): Record<string, unknown> {
  return {
    apiBaseUrl: fakeRelayUrl,
    secret: { source: "env", id: "TEST_RELAY_SECRET" },
    token: { source: "env", id: "TEST_RELAY_TOKEN" },
    dmPolicy: "open",
    allowFrom: ["*"],
    groupPolicy: "open",
    requireMention: false,
  };
}

/** The outbound key the test Worker signs sandbox requests with (the sandbox host accepts it). */
export const TEST_SANDBOX_KEY = { id: "sbx", secret: "test-sandbox-outbound-secret" };
