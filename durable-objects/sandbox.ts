import { Container, type StopParams } from "@cloudflare/containers";
import { configFromEnvWith } from "../functions/config/load.ts";
import { baseConfigSchema } from "../functions/config/schema.ts";
import type { SandboxOpInput } from "../functions/sandbox/wire.ts";
import type { Env } from "./env.ts";
import type { SandboxDescription, SandboxRpc } from "./rpc.ts";
import { containerEgress, type Egress } from "./sandbox/egress.ts";
import { withLoopbackContainer } from "./sandbox/loopback-container.ts";
import { SandboxRelay, type RelayAnswer } from "./sandbox/relay.ts";

/** The port the image's host process listens on (sandbox/Dockerfile, EDGECLAW_SANDBOX_PORT). */
export const SANDBOX_HOST_PORT = 8080;

/**
 * The sandbox of one scope (agents.defaults.sandbox.scope: `agent:<id>`, `session:<key>` or
 * `shared`, the name it is reached by) as a Cloudflare Container from sandbox/Dockerfile. The
 * session's container backend (functions/sandbox/backend.ts) calls `sandbox(op)` with the same
 * protocol the companion serves; the relay (sandbox/relay.ts) records each exec before forwarding it
 * to the host process inside, so a command runs once even though the container's disk does not
 * outlive the container. The container starts on the first command with the egress the command's
 * placement allows, sleeps after `agents.defaults.sandbox.container.sleepAfter` idle, and never
 * while a command it runs has not been reported ended.
 */
export class SandboxDO extends Container<Env> implements SandboxRpc {
  override defaultPort = SANDBOX_HOST_PORT;
  // Off unless a start says otherwise (relay → ensure → startContainer).
  override enableInternet = false;
  private readonly relay: SandboxRelay;

  constructor(ctx: ConstructorParameters<typeof Container>[0], env: Env) {
    // Tests (and only they) have no container engine: a loopback stand-in (EDGECLAW_LOOPBACK_CONTAINERS).
    super(withLoopbackContainer(ctx, env), env);
    // The base schema is enough (agents.*): the sandbox object loads no channel code.
    this.sleepAfter = configFromEnvWith(
      baseConfigSchema,
      env,
    ).agents.defaults.sandbox.container.sleepAfter;
    this.relay = new SandboxRelay(ctx.storage, {
      running: () => this.ctx.container?.running ?? false,
      start: (egress) => this.startContainer(egress),
      forward: (body, timeoutMs) => this.forwardToHost(body, timeoutMs),
      stop: () => this.destroy(),
    });
  }

  /** One sandbox protocol request (functions/sandbox/wire.ts) and the host's answer. */
  async sandbox(op: SandboxOpInput): Promise<RelayAnswer> {
    return this.relay.handle(op);
  }

  /** What the control page, `sessions show` and `edgeclaw status` say about this scope's sandbox. */
  async describe(): Promise<SandboxDescription> {
    return {
      ...this.relay.state(),
      sleepAfter: String(this.sleepAfter),
      commands: this.relay.openCommands(),
    };
  }

  private async startContainer(egress: Egress): Promise<void> {
    const settings = containerEgress(egress, this.usingInterception);
    if (settings.allowedHosts) await this.setAllowedHosts(settings.allowedHosts);
    // No secret and no variable of the Worker's: the host process needs none, and a command gets
    // only what its exec request carries (agents.defaults.sandbox.docker.env).
    await this.startAndWaitForPorts({
      ports: SANDBOX_HOST_PORT,
      startOptions: { enableInternet: settings.enableInternet, envVars: {} },
    });
  }

  private async forwardToHost(
    body: string,
    timeoutMs: number,
  ): Promise<{ status: number; body: unknown }> {
    const response = await this.containerFetch(
      new Request("http://sandbox/v1/sandbox", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
        signal: AbortSignal.timeout(timeoutMs),
      }),
      SANDBOX_HOST_PORT,
    );
    const text = await response.text();
    try {
      return { status: response.status, body: JSON.parse(text) };
    } catch {
      // Not the host's JSON: the Container class's own answer (not started, disconnected).
      if (response.status >= 500) throw new Error(text.slice(0, 300) || `HTTP ${response.status}`);
      return { status: response.status, body: { error: text.slice(0, 300), code: "refused" } };
    }
  }

  override async onActivityExpired(): Promise<void> {
    // Returning without stopping renews the idle timer (the Container class's contract).
    if (await this.relay.shouldStayAwake(sleepAfterMs(this.sleepAfter))) return;
    await this.stop("SIGTERM");
  }

  override onStop(_params: StopParams): void {
    this.relay.containerStopped();
  }

  override onError(error: unknown): void {
    // The default rethrows; the relay reports a command whose container failed as lost.
    console.error(
      "sandbox container error",
      error instanceof Error ? error.message : String(error),
    );
  }
}

/** `sleepAfter` ("30s", "10m", "1h", or seconds) in ms, as the Container class reads it. */
function sleepAfterMs(value: string | number): number {
  if (typeof value === "number") return value * 1000;
  const match = /^(\d+)([smh])$/.exec(value);
  if (!match) return 10 * 60_000;
  return Number(match[1]) * { s: 1000, m: 60_000, h: 3_600_000 }[match[2] as "s" | "m" | "h"];
}
