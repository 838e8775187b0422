import { Container, type StopParams } from "@cloudflare/containers";
import { COMPANION_CONTAINER_PORT } from "../functions/channels/companion/container-plan.ts";
import type { Env } from "./env.ts";
import type { CompanionContainerRpc } from "./rpc.ts";

/**
 * The companion process as a Cloudflare Container, one instance per companion deployment (named
 * like the deployment's CompanionDO). Its one job: run the container it is told to run and say
 * when it stopped. Whether it should run, the restart backoff and the crash-loop breaker live in
 * the deployment's CompanionDO (companion-keeper.ts), not here: this class cannot be constructed
 * without a container runtime (@cloudflare/containers throws), so it is never touched by
 * `npm run dev` or the workerd tests, and the lease DO stays small and testable.
 */
export class CompanionContainerDO extends Container<Env> implements CompanionContainerRpc {
  override defaultPort = COMPANION_CONTAINER_PORT;
  // Always on while wanted: the activity timer only paces onActivityExpired, which never stops it.
  override sleepAfter = "1h";

  /** Starts the container with `vars` (a no-op while it runs); the deployment is kept for onStop. */
  async launch(deployment: string, vars: Record<string, string>): Promise<void> {
    await this.ctx.storage.put("deployment", deployment);
    await this.start({ envVars: vars });
  }

  /** SIGTERM: the companion stops its connectors, drains its outbox and releases its lease. */
  async halt(): Promise<void> {
    await this.stop("SIGTERM");
  }

  override async onActivityExpired(): Promise<void> {
    // Not stopping here renews the timer (the Container class's contract): no activity is needed
    // to stay up; the CompanionDO halts the container when no socket account wants it any more.
  }

  override async onStop(params: StopParams): Promise<void> {
    const deployment = await this.ctx.storage.get<string>("deployment");
    if (!deployment) return;
    await this.env.COMPANION.getByName(deployment).containerStopped(params.exitCode, params.reason);
  }

  override onError(error: unknown): void {
    // The default rethrows; a stop is reported through onStop, which drives the restart.
    console.error(
      "companion container error",
      error instanceof Error ? error.message : String(error),
    );
  }
}
