import type { Env } from "../workers/env.ts";

declare module "cloudflare:test" {
  interface ProvidedEnv extends Env {}
}
