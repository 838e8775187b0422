import type { Env } from "./env.ts";

/** The one scheduler object (durable-objects/scheduler.ts), for the admin API, the cron tool and hooks. */
export function schedulerStub(env: Pick<Env, "SCHEDULER">) {
  return env.SCHEDULER.get(env.SCHEDULER.idFromName("global"));
}
