import { DurableObject } from "cloudflare:workers";
import type { Env } from "../workers/env.ts";

export class SessionDO extends DurableObject<Env> {
  async ping(): Promise<string> {
    return "pong";
  }
}
