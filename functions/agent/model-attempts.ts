import { ModelError, type ModelErrorKind } from "./types.ts";

/**
 * The bookkeeping of one model call's attempts (model-call.ts): each failed attempt's record, the
 * error that sums them up when every candidate failed, the fallback log line, and the sleeps
 * between attempts, which an abort cuts short.
 */

export interface ModelAttempt {
  modelRef: string;
  attempt: number;
  kind: ModelErrorKind;
  status?: number;
  message: string;
}

/** Every candidate failed: the last failure's kind, with the whole story in `attempts`. */
export class ModelFailoverError extends ModelError {
  constructor(
    kind: ModelErrorKind,
    message: string,
    readonly attempts: ModelAttempt[],
    status?: number,
    retryAfterMs?: number,
  ) {
    super(kind, message, status, retryAfterMs);
    this.name = "ModelFailoverError";
  }
}

export function summarise(
  last: ModelError,
  attempts: ModelAttempt[],
  candidateCount: number,
): ModelError {
  if (last.kind === "aborted" || attempts.length === 0) return last;
  const failedModels = [...new Set(attempts.map((attempt) => attempt.modelRef))];
  const message =
    candidateCount > 1
      ? `All models failed (${failedModels.join(", ")}); last: ${attempts.at(-1)?.modelRef ?? "?"}: ${last.message}`
      : `${attempts.at(-1)?.modelRef ?? "model"}: ${last.message}`;
  return new ModelFailoverError(last.kind, message, [...attempts], last.status, last.retryAfterMs);
}

export function record(modelRef: string, attempt: number, error: ModelError): ModelAttempt {
  return {
    modelRef,
    attempt,
    kind: error.kind,
    ...(error.status !== undefined ? { status: error.status } : {}),
    message: error.message,
  };
}

export function asModelError(error: unknown): ModelError {
  if (error instanceof ModelError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new ModelError("server", `model adapter failed: ${message}`);
}

/** OpenClaw's structured `model_fallback_decision` log line (no secrets: messages are redacted upstream). */
export function logFallback(from: string, to: string | undefined, error: ModelError): void {
  console.warn(
    JSON.stringify({
      event: "model_fallback_decision",
      fallbackStepFromModel: from,
      fallbackStepToModel: to ?? null,
      fallbackStepFromFailureReason: error.kind,
      fallbackStepFromFailureDetail: error.message.slice(0, 300),
      fallbackStepFinalOutcome: to ? "next_candidate" : "exhausted",
    }),
  );
}

export function defaultSleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export function abortableSleep(
  sleep: (ms: number) => Promise<void>,
  signal: AbortSignal | undefined,
): (ms: number) => Promise<void> {
  return (ms) => {
    if (!signal) return sleep(ms);
    if (signal.aborted)
      return Promise.reject(new ModelError("aborted", "the model call was aborted"));
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => reject(new ModelError("aborted", "the model call was aborted"));
      signal.addEventListener("abort", onAbort, { once: true });
      sleep(ms).then(
        () => {
          signal.removeEventListener("abort", onAbort);
          resolve();
        },
        (error: unknown) => {
          signal.removeEventListener("abort", onAbort);
          reject(error);
        },
      );
    });
  };
}
