import { env } from "cloudflare:test";
import { parseConfig } from "../../../functions/channels/gateway-config.ts";
import type { EdgeclawConfig } from "../../../functions/config/schema.ts";
import { writeFile } from "../../../functions/agent/workspace.ts";
import { fakeModelUrl } from "../model-helpers.ts";

export { fakeModelUrl };

export function memoryAgent(): string {
  return `mem-${crypto.randomUUID().slice(0, 8)}`;
}

/** A config whose memory search embeds with `model` on the fake server (or none / a broken one). */
export function memoryConfig(search: Record<string, unknown> = {}): EdgeclawConfig {
  return parseConfig({
    memory: {
      search: {
        provider: "openai",
        baseUrl: `${fakeModelUrl()}/v1`,
        apiKey: "test-embed-key",
        model: "fake-embed",
        ...search,
      },
    },
  });
}

export async function seed(agentId: string, files: Record<string, string>): Promise<void> {
  for (const [path, content] of Object.entries(files)) await writeFile(env, agentId, path, content);
}

/** Embedding requests the fake server saw for `model`. */
export async function embeddingCalls(model: string): Promise<Array<{ body: { input: string[] } }>> {
  const response = await fetch(
    `${fakeModelUrl()}/_control/requests?scenario=${encodeURIComponent(`embeddings:${model}`)}`,
  );
  return ((await response.json()) as { requests: Array<{ body: { input: string[] } }> }).requests;
}
