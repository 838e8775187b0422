import type { Env as EdgeclawEnv } from "../workers/env.ts";

// `env` from "cloudflare:test" is typed as Cloudflare.Env: give it the Worker's bindings.
declare global {
  namespace Cloudflare {
    interface Env extends EdgeclawEnv {}
  }
}
