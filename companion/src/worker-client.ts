import { signRequest, type SigningKey } from "../../functions/channels/companion/signature.ts";

/**
 * Signed requests to the Worker's `/internal/companion/*` (the HMAC of
 * functions/channels/companion/signature.ts over method, path with query, key id and body; GET
 * signs an empty body). Answers are returned raw; each caller validates its own shape.
 */
export interface WorkerAnswer {
  status: number;
  json: unknown;
}

export class WorkerClient {
  constructor(
    private readonly baseUrl: string,
    private readonly key: SigningKey,
    private readonly timeoutMs: number,
  ) {}

  async request(
    method: "GET" | "POST",
    path: string,
    body?: unknown,
    signal?: AbortSignal,
  ): Promise<WorkerAnswer> {
    const url = new URL(
      path.replace(/^\//, ""),
      this.baseUrl.endsWith("/") ? this.baseUrl : `${this.baseUrl}/`,
    );
    const text = method === "POST" ? JSON.stringify(body ?? {}) : "";
    const bytes = new TextEncoder().encode(text);
    const headers = await signRequest(this.key, {
      method,
      path: url.pathname + url.search,
      body: bytes,
      timestamp: Math.floor(Date.now() / 1000),
    });
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const response = await fetch(url, {
      method,
      headers: { ...headers, ...(method === "POST" ? { "content-type": "application/json" } : {}) },
      ...(method === "POST" ? { body: text } : {}),
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
    const raw = await response.text();
    let json: unknown;
    try {
      json = raw ? JSON.parse(raw) : undefined;
    } catch {
      json = { error: raw.slice(0, 200) };
    }
    return { status: response.status, json };
  }
}

/** A short reason for logs and status, never a secret (bodies of our own Worker carry none). */
export function describeAnswer(answer: WorkerAnswer): string {
  const error =
    typeof answer.json === "object" && answer.json !== null && "error" in answer.json
      ? String((answer.json as { error: unknown }).error)
      : "";
  return `HTTP ${answer.status}${error ? `: ${error.slice(0, 200)}` : ""}`;
}
