import { OpenAIHttpError, invalidRequest } from "./errors.ts";

/**
 * Reads a JSON body under a byte cap. The cap is checked against Content-Length first and then
 * while streaming, so an oversized body is refused with 413 before any of it is parsed and a
 * client that lies about its length cannot push more than the cap into memory.
 */
export async function readJsonBody(request: Request, maxBytes: number): Promise<unknown> {
  const declared = Number(request.headers.get("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(maxBytes);
  if (!request.body) throw invalidRequest("Request body is empty; expected JSON");

  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(maxBytes);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  const text = new TextDecoder().decode(bytes);
  if (text.trim() === "") throw invalidRequest("Request body is empty; expected JSON");
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw invalidRequest("Request body is not valid JSON", null, "invalid_json");
  }
}

function tooLarge(maxBytes: number): OpenAIHttpError {
  return new OpenAIHttpError(
    413,
    `Request body exceeds ${maxBytes} bytes (gateway.http.endpoints.chatCompletions.maxBodyBytes)`,
    "invalid_request_error",
    "request_too_large",
  );
}
