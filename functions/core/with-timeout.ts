/**
 * A promise that rejects after `ms` when `promise` has not settled by then — for a binding call
 * (Workers AI over RPC) that takes no AbortSignal. The work itself is not cancelled; its late
 * answer is ignored.
 */
export function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
