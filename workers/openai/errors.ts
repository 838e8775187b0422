/**
 * Errors in the shape OpenAI clients parse: `{ error: { message, type, param, code } }`. The
 * official SDKs turn this body into a typed APIError, so every refusal on /v1 uses it.
 */

export type OpenAIErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "permission_error"
  | "not_found_error"
  | "rate_limit_error"
  | "api_error";

export interface OpenAIErrorBody {
  error: { message: string; type: OpenAIErrorType; param: string | null; code: string | null };
}

export class OpenAIHttpError extends Error {
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 409 | 413 | 429 | 500 | 502 | 503,
    message: string,
    readonly type: OpenAIErrorType,
    readonly code: string | null = null,
    readonly param: string | null = null,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = "OpenAIHttpError";
  }

  body(): OpenAIErrorBody {
    return {
      error: { message: this.message, type: this.type, param: this.param, code: this.code },
    };
  }

  toResponse(): Response {
    return Response.json(this.body(), { status: this.status, headers: this.headers });
  }
}

export function invalidRequest(
  message: string,
  param: string | null = null,
  code: string | null = null,
): OpenAIHttpError {
  return new OpenAIHttpError(400, message, "invalid_request_error", code, param);
}

export function notFound(
  message: string,
  code: string,
  param: string | null = null,
): OpenAIHttpError {
  return new OpenAIHttpError(404, message, "invalid_request_error", code, param);
}
