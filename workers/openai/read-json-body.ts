import { OpenAIHttpError, invalidRequest } from "./errors.ts";
import { readBodyCapped } from "../../functions/http/read-body.ts";

/** Reads a JSON body under a byte cap (413 before anything is parsed), with OpenAI-shaped errors. */
export async function readJsonBody(request: Request, maxBytes: number): Promise<unknown> {
  const body = await readBodyCapped(request, maxBytes);
  if (!body.ok) throw tooLarge(maxBytes);
  const text = new TextDecoder().decode(body.bytes);
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
