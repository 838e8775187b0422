import { z } from "zod";
import type { MemorySearchConfig } from "../../config/memory-keys.ts";
import { resolveSecret, type SecretEnv } from "../../config/secret-ref.ts";

/**
 * The embedding provider for memory search: any OpenAI-compatible `/embeddings` endpoint
 * (`memory.search.provider`, `model`, `baseUrl`, `apiKey`). Resolution follows OpenClaw:
 *   - `none`: keyword search only, on purpose;
 *   - unset / `auto`: embeddings when a key is at hand (memory.search.apiKey, else OPENAI_API_KEY),
 *     keyword-only when there is none or the call fails (soft);
 *   - any other id: explicit, so a failure is reported ("memory unavailable"), never hidden.
 */

export const DEFAULT_EMBEDDING_MODEL = "text-embedding-3-small";
export const DEFAULT_EMBEDDING_BASE_URL = "https://api.openai.com/v1";

export type EmbeddingProvider =
  | { kind: "none"; reason: string }
  | { kind: "openai-compatible"; id: string; explicit: boolean; baseUrl: string; model: string; apiKey: string | undefined };

export function resolveEmbeddingProvider(search: MemorySearchConfig, env: SecretEnv): EmbeddingProvider {
  const id = search.provider ?? "auto";
  if (id === "none") return { kind: "none", reason: 'memory.search.provider is "none"' };
  const explicit = id !== "auto";
  const configuredKey = resolveSecret(search.apiKey, env);
  const envKey = typeof env.OPENAI_API_KEY === "string" && env.OPENAI_API_KEY ? env.OPENAI_API_KEY : undefined;
  const apiKey = configuredKey ?? (search.baseUrl ? undefined : envKey);
  if (!explicit && !apiKey && !search.baseUrl) return { kind: "none", reason: "no embedding provider is configured (memory.search.provider)" };
  return {
    kind: "openai-compatible",
    id,
    explicit,
    baseUrl: (search.baseUrl ?? DEFAULT_EMBEDDING_BASE_URL).replace(/\/+$/, ""),
    model: search.model ?? DEFAULT_EMBEDDING_MODEL,
    apiKey,
  };
}

/** What the index was built with; a change of any part rebuilds it. */
export function indexFingerprint(search: MemorySearchConfig, provider: EmbeddingProvider): string {
  const embedder = provider.kind === "none" ? "none" : `${provider.baseUrl}|${provider.model}`;
  return `v1|${embedder}|${search.chunking.tokens}/${search.chunking.overlap}`;
}

export class EmbeddingError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = "EmbeddingError";
  }
}

const embeddingsResponse = z.object({
  data: z.array(z.object({ index: z.number().int().nonnegative(), embedding: z.array(z.number()) })),
});

/** Embeds `texts` in order, `batchSize` per request. Throws EmbeddingError on any failure. */
export async function embedTexts(
  provider: Extract<EmbeddingProvider, { kind: "openai-compatible" }>,
  texts: readonly string[],
  options: { batchSize: number; timeoutMs: number; fetcher?: typeof fetch },
): Promise<number[][]> {
  const out: number[][] = [];
  const doFetch = options.fetcher ?? fetch;
  for (let at = 0; at < texts.length; at += options.batchSize) {
    const batch = texts.slice(at, at + options.batchSize);
    let response: Response;
    try {
      response = await doFetch(`${provider.baseUrl}/embeddings`, {
        method: "POST",
        headers: { "content-type": "application/json", ...(provider.apiKey ? { authorization: `Bearer ${provider.apiKey}` } : {}) },
        body: JSON.stringify({ model: provider.model, input: batch }),
        signal: AbortSignal.timeout(options.timeoutMs),
      });
    } catch (error) {
      throw new EmbeddingError(`embeddings request failed: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (!response.ok) {
      const detail = (await response.text().catch(() => "")).slice(0, 200);
      throw new EmbeddingError(`embeddings endpoint answered ${response.status}${detail ? `: ${detail}` : ""}`, response.status);
    }
    const parsed = embeddingsResponse.safeParse(await response.json().catch(() => null));
    if (!parsed.success) throw new EmbeddingError("embeddings endpoint answered with an unexpected body");
    const vectors = [...parsed.data.data].sort((a, b) => a.index - b.index).map((item) => item.embedding);
    if (vectors.length !== batch.length || vectors.some((v) => v.length === 0 || v.some((x) => !Number.isFinite(x)))) {
      throw new EmbeddingError(`embeddings endpoint returned ${vectors.length} vectors for ${batch.length} inputs`);
    }
    out.push(...vectors);
  }
  return out;
}

/** pgvector's text form. */
export function vectorLiteral(vector: readonly number[]): string {
  return `[${vector.join(",")}]`;
}
