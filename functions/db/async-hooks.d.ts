// workerd provides node:async_hooks under the nodejs_compat flag; the Worker's tsconfig does not
// load @types/node, so the one class used here is declared by hand.
declare module "node:async_hooks" {
  export class AsyncLocalStorage<T> {
    getStore(): T | undefined;
    run<R>(store: T, callback: () => R): R;
  }
}
