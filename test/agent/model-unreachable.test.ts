import { describe, expect, it } from "vitest";
import { callModel, ModelFailoverError } from "../../functions/agent/model-call.ts";
import { UNMETERED } from "../../functions/agent/metering.ts";
import type { EdgeclawConfig } from "../../functions/config/schema.ts";
import { fakeModelUrl, suiteConfig, testEnv as env } from "./model-helpers.ts";

/**
 * A model provider that cannot be reached: the error the chat shows names the cause (the host's
 * name does not resolve, nothing listens on the port, the TLS handshake failed), the host and the
 * config key to fix, in one line. Loopback only: a closed port, a name under `.invalid` (RFC 2606:
 * never resolves) and HTTPS spoken to the fake model server, which only speaks plain HTTP.
 */

function withProvider(baseUrl: string): EdgeclawConfig {
  return {
    ...suiteConfig,
    models: {
      ...suiteConfig.models,
      providers: {
        ...suiteConfig.models.providers,
        offline: {
          ...suiteConfig.models.providers.fakeopenai!,
          baseUrl,
          api: "openai-completions",
        },
      },
    },
  };
}

async function failureFor(baseUrl: string): Promise<ModelFailoverError> {
  const error = await callModel({
    config: withProvider(baseUrl),
    env,
    selection: { primary: "offline/gpt-test", fallbacks: [] },
    request: { system: "sys", messages: [{ role: "user", content: "hi" }], tools: [] },
    meter: UNMETERED,
    sleep: async () => undefined,
    maxAttempts: 1,
  }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ModelFailoverError);
  return error as ModelFailoverError;
}

describe("a model provider that cannot be reached", () => {
  it("names a DNS failure for the provider's host", async () => {
    const error = await failureFor("https://no-such-model-host.invalid/v1");
    expect(error.kind).toBe("network");
    expect(error.message).toContain("DNS lookup failed");
    expect(error.message).toContain("no-such-model-host.invalid");
    expect(error.message).toContain("models.providers.offline.baseUrl");
    expect(error.message).not.toContain("internal error");
  });

  it("names a refused connection on a closed loopback port", async () => {
    const error = await failureFor("http://127.0.0.1:1/v1");
    expect(error.message).toContain("connection refused by 127.0.0.1:1");
    expect(error.message).toContain("models.providers.offline.baseUrl (http://127.0.0.1:1)");
    expect(error.message).not.toContain("DNS");
  });

  it("names a failed TLS handshake (HTTPS to a plain-HTTP server)", async () => {
    const plain = new URL(fakeModelUrl());
    const error = await failureFor(`https://${plain.host}/v1`);
    expect(error.message).toContain(`the TLS handshake with ${plain.host} failed`);
    expect(error.message).not.toContain("DNS");
  });

  it("keeps the message to one line without the API key", async () => {
    const error = await failureFor("https://no-such-model-host.invalid/v1");
    expect(error.message).not.toContain("\n");
    expect(error.message).not.toContain("test-openai-key");
  });
});
