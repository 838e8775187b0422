import * as z from "zod";
import type { MemorySearchConfig } from "../../config/memory-keys.ts";
import { resolveSecret, type SecretEnv } from "../../config/secret-ref.ts";
import {
  DEFAULT_WORKERS_AI_EMBEDDING_MODEL,
  runWorkersAiEmbeddings,
  WORKERS_AI_MAX_BATCH,
  workersAiBinding,
  type WorkersAiBinding,
} from "./workers-ai.ts";
import { classOfHttpStatus, EdgeclawError } from "../../core/errors.ts";

/**
 * The embedding provider for memory search: any OpenAI-compatible `/embeddings` endpoint
 * (`memory.search.provider`, `model`, `baseUrl`, `apiKey`), or Cloudflare Workers AI through the
 * Worker's `AI` binding. Resolution follows OpenClaw:
 *   - `none`: keyword search only, on purpose;
 *   - unset / `auto`: embeddings when a key is at hand (memory.search.apiKey, else OPENAI_API_KEY) or
 *     a base URL is set; otherwise Workers AI when the Worker has an `AI` binding (binding it is the
 *     operator's opt-in to pay for it); keyword-only when there is neither or the call fails (soft);
 *   - `workers-ai`: the `AI` binding, explicit (no binding = "memory unavailable");
 *   - any other id: explicit, so a failure is reported ("memory unavailable"), never hidden.
 */

export const DEFAULT_EMBEDDING_MODEL = "text-embedding-3-small";
export const DEFAULT_EMBEDDING_BASE_URL = "https://api.openai.com/v1";

export const WORKERS_AI_PROVIDER_ID = "workers-ai";

export type EmbeddingProvider =
  | { kind: "none"; reason: string }
  | {
      kind: "openai-compatible";
      id: string;
      explicit: boolean;
      baseUrl: string;
      model: string;
      apiKey: string | undefined;
    }
  | {
      kind: "workers-ai";
      id: string;
      explicit: boolean;
      model: string;
      binding: WorkersAiBinding | undefined;
    };

export type ActiveEmbeddingProvider = Exclude<EmbeddingProvider, { kind: "none" }>;

export function resolveEmbeddingProvider(
  search: MemorySearchConfig,
  env: SecretEnv,
): EmbeddingProvider {
  const id = search.provider ?? "auto";
  if (id === "none") return { kind: "none", reason: 'memory.search.provider is "none"' };
  const explicit = id !== "auto";
  const configuredKey = resolveSecret(search.apiKey, env);
  const envKey =
    typeof env.OPENAI_API_KEY === "string" && env.OPENAI_API_KEY ? env.OPENAI_API_KEY : undefined;
  const apiKey = configuredKey ?? (search.baseUrl ? undefined : envKey);
  const binding = workersAiBinding(env);
  if (id === WORKERS_AI_PROVIDER_ID || (!explicit && !apiKey && !search.baseUrl && binding)) {
    return {
      kind: "workers-ai",
      id: WORKERS_AI_PROVIDER_ID,
      explicit,
      model: search.model ?? DEFAULT_WORKERS_AI_EMBEDDING_MODEL,
      binding,
    };
  }
  if (!explicit && !apiKey && !search.baseUrl)
    return { kind: "none", reason: "no embedding provider is configured (memory.search.provider)" };
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
  const embedder =
    provider.kind === "none"
      ? "none"
      : provider.kind === "workers-ai"
        ? `${WORKERS_AI_PROVIDER_ID}|${provider.model}`
        : `${provider.baseUrl}|${provider.model}`;
  return `v1|${embedder}|${search.chunking.tokens}/${search.chunking.overlap}`;
}

/** The embedding provider failed: by its HTTP status, or transient when it did not answer. */
export class EmbeddingError extends EdgeclawError {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(status === undefined ? "transient" : classOfHttpStatus(status), message);
  }
}

const embeddingsResponse = z.object({
  data: z.array(
    z.object({ index: z.number().int().nonnegative(), embedding: z.array(z.number()) }),
  ),
});

function checkVectors(vectors: number[][], inputs: number, source: string): void {
  if (
    vectors.length !== inputs ||
    vectors.some((v) => v.length === 0 || v.some((x) => !Number.isFinite(x)))
  ) {
    throw new EmbeddingError(`${source} returned ${vectors.length} vectors for ${inputs} inputs`);
  }
}

export interface EmbedOptions {
  batchSize: number;
  timeoutMs: number;
  fetcher?: typeof fetch;
}

/** Embeds `texts` in order, `batchSize` per request. Throws EmbeddingError on any failure. */
export async function embedTexts(
  provider: ActiveEmbeddingProvider,
  texts: readonly string[],
  options: EmbedOptions,
): Promise<number[][]> {
  return provider.kind === "workers-ai"
    ? embedWithWorkersAi(provider, texts, options)
    : embedWithOpenAiCompatible(provider, texts, options);
}

async function embedWithWorkersAi(
  provider: Extract<EmbeddingProvider, { kind: "workers-ai" }>,
  texts: readonly string[],
  options: EmbedOptions,
): Promise<number[][]> {
  const binding = provider.binding;
  if (!binding)
    throw new EmbeddingError(
      'memory.search.provider is "workers-ai" but the Worker has no AI binding (wrangler.toml [ai] binding = "AI")',
    );
  const out: number[][] = [];
  const batchSize = Math.min(options.batchSize, WORKERS_AI_MAX_BATCH);
  for (let at = 0; at < texts.length; at += batchSize) {
    const batch = texts.slice(at, at + batchSize);
    let vectors: number[][];
    try {
      vectors = await runWorkersAiEmbeddings(binding, provider.model, batch, options.timeoutMs);
    } catch (error) {
      throw new EmbeddingError(
        `Workers AI embeddings failed: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    checkVectors(vectors, batch.length, `Workers AI model ${provider.model}`);
    out.push(...vectors);
  }
  return out;
}

async function embedWithOpenAiCompatible(
  provider: Extract<EmbeddingProvider, { kind: "openai-compatible" }>,
  texts: readonly string[],
  options: EmbedOptions,
): Promise<number[][]> {
  const out: number[][] = [];
  const doFetch = options.fetcher ?? fetch;
  for (let at = 0; at < texts.length; at += options.batchSize) {
    const batch = texts.slice(at, at + options.batchSize);
    let response: Response;
    try {
      response = await doFetch(`${provider.baseUrl}/embeddings`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(provider.apiKey ? { authorization: `Bearer ${provider.apiKey}` } : {}),
        },
        body: JSON.stringify({ model: provider.model, input: batch }),
        signal: AbortSignal.timeout(options.timeoutMs),
      });
    } catch (error) {
      throw new EmbeddingError(
        `embeddings request failed: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    if (!response.ok) {
      const detail = (await response.text().catch(() => "")).slice(0, 200);
      throw new EmbeddingError(
        `embeddings endpoint answered ${response.status}${detail ? `: ${detail}` : ""}`,
        response.status,
      );
    }
    const parsed = embeddingsResponse.safeParse(await response.json().catch(() => null));
    if (!parsed.success)
      throw new EmbeddingError("embeddings endpoint answered with an unexpected body");
    const vectors = [...parsed.data.data]
      .sort((a, b) => a.index - b.index)
      .map((item) => item.embedding);
    checkVectors(vectors, batch.length, "embeddings endpoint");
    out.push(...vectors);
  }
  return out;
}

/** pgvector's text form. */
export function vectorLiteral(vector: readonly number[]): string {
  return `[${vector.join(",")}]`;
}
