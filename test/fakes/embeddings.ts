import type { ServerResponse } from "node:http";

/**
 * OpenAI-compatible `POST /v1/embeddings` for the fake model server. Vectors are deterministic:
 * a hashed bag of words (64 dimensions, unit length) in which a few words share a "concept", so
 * "vehicle" lands near "car" and a meaning-based hit exists that keyword search cannot find. The
 * model name seeds the hash, so two models give incompatible spaces, as real models do.
 *   model starting with "fail"       → 503 (a provider outage)
 *   Authorization "Bearer bad-key"   → 401
 * Each request is logged under `embeddings:<model>` (GET /_control/requests?scenario=…).
 */

export const FAKE_EMBEDDING_DIMENSIONS = 64;

const CONCEPTS: Record<string, string> = {
  car: "vehicle",
  automobile: "vehicle",
  vehicle: "vehicle",
  truck: "vehicle",
  sedan: "vehicle",
  dog: "pet",
  puppy: "pet",
  cat: "pet",
  kitten: "pet",
  pet: "pet",
  router: "network",
  wifi: "network",
  network: "network",
  modem: "network",
};

function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

export function fakeEmbedding(model: string, text: string): number[] {
  const vector = new Array<number>(FAKE_EMBEDDING_DIMENSIONS).fill(0);
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    if (word.length < 3) continue;
    vector[fnv1a(`${model}:${CONCEPTS[word] ?? word}`) % FAKE_EMBEDDING_DIMENSIONS]! += 1;
  }
  const norm = Math.hypot(...vector);
  if (norm === 0) {
    vector[0] = 1;
    return vector;
  }
  return vector.map((x) => x / norm);
}

export function handleEmbeddings(
  res: ServerResponse,
  headers: Record<string, string>,
  body: Record<string, unknown>,
  log: (scenario: string) => void,
): void {
  const model = typeof body.model === "string" ? body.model : "";
  log(`embeddings:${model}`);
  const send = (status: number, payload: unknown) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(payload));
  };
  if (headers.authorization === "Bearer bad-key")
    return send(401, {
      error: { message: "Incorrect API key provided", type: "invalid_request_error" },
    });
  if (model.startsWith("fail"))
    return send(503, { error: { message: "embeddings are overloaded", type: "server_error" } });
  const input =
    typeof body.input === "string"
      ? [body.input]
      : Array.isArray(body.input)
        ? body.input
        : undefined;
  if (!model || !input || input.some((item) => typeof item !== "string"))
    return send(400, {
      error: {
        message: "model and input (string or string[]) are required",
        type: "invalid_request_error",
      },
    });
  send(200, {
    object: "list",
    model,
    data: (input as string[]).map((text, index) => ({
      object: "embedding",
      index,
      embedding: fakeEmbedding(model, text),
    })),
    usage: { prompt_tokens: 0, total_tokens: 0 },
  });
}

/**
 * Workers AI's `POST …/ai/run/<model>` for text embeddings (the REST form of `env.AI.run`), served
 * to the test Worker's fake `AI` binding (test/fakes/workers-ai-binding.js). Input `{ text }`, output
 * `{ result: { shape, data, pooling }, success, errors }`; same deterministic vectors as above.
 *   model containing "fail"  → 500 with Workers AI's error envelope
 * Each request is logged under `workers-ai:<model>`.
 */
export function handleWorkersAiRun(
  res: ServerResponse,
  model: string,
  body: Record<string, unknown>,
  log: (scenario: string) => void,
): void {
  log(`workers-ai:${model}`);
  const send = (status: number, payload: unknown) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(payload));
  };
  if (model.includes("fail"))
    return send(500, {
      result: null,
      success: false,
      errors: [{ code: 3040, message: "Capacity temporarily exceeded" }],
    });
  const text =
    typeof body.text === "string" ? [body.text] : Array.isArray(body.text) ? body.text : undefined;
  if (!text || text.some((item) => typeof item !== "string"))
    return send(400, {
      result: null,
      success: false,
      errors: [{ code: 5006, message: "text is required" }],
    });
  if (text.length > 100)
    return send(400, {
      result: null,
      success: false,
      errors: [{ code: 5006, message: "at most 100 texts per request" }],
    });
  const data = (text as string[]).map((item) => fakeEmbedding(`workers-ai:${model}`, item));
  send(200, {
    result: { shape: [data.length, FAKE_EMBEDDING_DIMENSIONS], data, pooling: "mean" },
    success: true,
    errors: [],
    messages: [],
  });
}
