import * as z from "zod";

/**
 * Cloudflare Workers AI as a memory embedding provider, through the Worker's `AI` binding
 * (wrangler.toml `[ai] binding = "AI"`): `env.AI.run(model, { text: [...] })` answers
 * `{ shape: [n, dims], data: number[][] }`. No key and no base URL: the binding is the credential,
 * and every call is billed to the Cloudflare account (per input token), so it is only used when the
 * operator has bound it.
 */

export const DEFAULT_WORKERS_AI_EMBEDDING_MODEL = "@cf/baai/bge-base-en-v1.5";

/** Texts per `AI.run` call: Workers AI's BGE embedding models take at most 100 inputs per request. */
export const WORKERS_AI_MAX_BATCH = 100;

/** The one method of the `Ai` binding this module uses. */
export interface WorkersAiBinding {
  run(model: string, inputs: { text: string[] }): Promise<unknown>;
}

/** The `AI` binding when the Worker has one (a real binding, or a service stub that speaks the same call). */
export function workersAiBinding(env: Record<string, unknown>): WorkersAiBinding | undefined {
  const candidate = env.AI as { run?: unknown } | undefined;
  return candidate &&
    (typeof candidate === "object" || typeof candidate === "function") &&
    typeof candidate.run === "function"
    ? (candidate as WorkersAiBinding)
    : undefined;
}

const textEmbeddingsOutput = z.object({
  shape: z.array(z.number().int().nonnegative()).optional(),
  data: z.array(z.array(z.number())),
});

/** One `AI.run` call; rejects with the binding's error, an unexpected body, or a timeout (as `Error`). */
export async function runWorkersAiEmbeddings(
  binding: WorkersAiBinding,
  model: string,
  texts: string[],
  timeoutMs: number,
): Promise<number[][]> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`Workers AI did not answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
  });
  try {
    const output = await Promise.race([binding.run(model, { text: texts }), timeout]);
    const parsed = textEmbeddingsOutput.safeParse(output);
    if (!parsed.success)
      throw new Error(
        `Workers AI model ${model} answered with something that is not text embeddings`,
      );
    return parsed.data.data;
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}
