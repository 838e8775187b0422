import { randomUUID } from "node:crypto";
import { join } from "node:path";
import type { Server } from "node:http";
import * as z from "zod";
import type { ConnectorAccount, ConnectorSource } from "./connector.ts";
import type { CompanionSettings } from "./settings.ts";
import { Outbox } from "./outbox.ts";
import { WorkerClient, describeAnswer } from "./worker-client.ts";
import { IngressDispatcher } from "./ingress.ts";
import { LeaseKeeper } from "./lease.ts";
import { StateClient } from "./state-client.ts";
import { Supervisor } from "./supervisor.ts";
import { startHttp } from "./http.ts";
import { canSend } from "./outbound.ts";
import { delay, jitteredDelay } from "./backoff.ts";
import { SandboxHost } from "./sandbox/host.ts";
import { condaBinds } from "./sandbox/conda-bind.ts";

/**
 * One companion process: the order of its parts is the durability argument.
 * 1. open the outbox and resend what a previous run left (before any connector could add to it);
 * 2. take the lease (wait while another instance holds it);
 * 3. learn the accounts from the Worker and start their connectors;
 * 4. on lease loss: stop every connector at once, go back to 2;
 * 5. on stop: stop connectors, let the outbox drain (bounded), release the lease.
 */
export type Log = (
  level: "debug" | "info" | "warn" | "error",
  message: string,
  fields?: Record<string, unknown>,
) => void;

const accountsSchema = z.object({
  accounts: z.array(
    z.object({
      channel: z.string(),
      accountId: z.string(),
      label: z.string(),
      settings: z.record(z.string(), z.unknown()),
      secretEnv: z.record(z.string(), z.string()),
    }),
  ),
});

export class Companion {
  readonly instanceId: string;
  readonly outbox: Outbox;
  readonly ingress: IngressDispatcher;
  readonly lease: LeaseKeeper;
  readonly supervisor: Supervisor;
  private readonly client: WorkerClient;
  private readonly controller = new AbortController();
  private server: Server | undefined;
  private statusTimer: NodeJS.Timeout | undefined;
  private statusSoon: NodeJS.Timeout | undefined;
  private cycle: Promise<void> | undefined;
  port = 0;
  /** Runs the agent's exec commands in bubblewrap (POST /v1/sandbox), records under the data dir. */
  readonly sandbox: SandboxHost;

  constructor(
    private readonly settings: CompanionSettings,
    connectors: ConnectorSource,
    env: Record<string, string | undefined>,
    private readonly log: Log,
  ) {
    this.instanceId = settings.EDGECLAW_COMPANION_INSTANCE_ID ?? `companion-${randomUUID()}`;
    this.client = new WorkerClient(
      settings.EDGECLAW_WORKER_URL,
      {
        id: settings.EDGECLAW_COMPANION_KEY_ID,
        // Sandbox-only: never used (no call to the Worker is made).
        secret: settings.EDGECLAW_COMPANION_INGRESS_SECRET ?? "",
      },
      settings.EDGECLAW_COMPANION_REQUEST_TIMEOUT_MS,
    );
    this.outbox = new Outbox(
      settings.EDGECLAW_COMPANION_DATA_DIR,
      settings.EDGECLAW_COMPANION_OUTBOX_MAX_ROWS,
    );
    this.ingress = new IngressDispatcher(this.outbox, this.client, {
      maxBatchEvents: settings.EDGECLAW_COMPANION_BATCH_MAX_EVENTS,
      maxBatchBytes: settings.EDGECLAW_COMPANION_BATCH_MAX_BYTES,
      retryBaseMs: 500,
      retryMaxMs: settings.EDGECLAW_COMPANION_RETRY_MAX_MS,
      log,
    });
    this.sandbox = new SandboxHost(join(settings.EDGECLAW_COMPANION_DATA_DIR, "sandbox"), log, {
      binds: condaBinds(),
    });
    this.lease = new LeaseKeeper(this.client, this.instanceId, log);
    const state = new StateClient(
      this.client,
      () => this.lease.epoch,
      (reason) => this.lease.lost(reason),
    );
    this.supervisor = new Supervisor({
      connectors,
      submit: (channel, accountId, events) => this.ingress.submit(channel, accountId, events),
      state,
      env,
      log,
      onStatus: () => this.reportSoon(),
      crashLoopStarts: settings.EDGECLAW_COMPANION_CRASH_LOOP_STARTS,
      crashLoopWindowMs: settings.EDGECLAW_COMPANION_CRASH_LOOP_WINDOW_MS,
    });
  }

  async start(): Promise<void> {
    this.ingress.resumeLeftovers();
    const { server, port } = await startHttp(
      {
        outboundKeys: outboundKeys(this.settings),
        ready: () => {
          const reports = this.supervisor.reports();
          const lease =
            this.lease.epoch !== undefined
              ? { lease: "held" }
              : this.lease.waitingFor
                ? { lease: "waiting", leaseHolder: this.lease.waitingFor }
                : { lease: "acquiring" };
          return {
            ready: this.lease.epoch !== undefined && reports.every((r) => r.state === "ready"),
            detail: {
              ...lease,
              leaseEpoch: this.lease.epoch ?? null,
              connectors: reports,
              outbox: this.outbox.size(),
            },
          };
        },
        sender: (channel, accountId) => {
          const connector = this.supervisor.connector(channel, accountId);
          return canSend(connector) ? connector : undefined;
        },
        receipts: {
          get: (commandId) =>
            this.outbox.receipt(commandId, this.settings.EDGECLAW_COMPANION_RECEIPT_TTL_MS),
          save: (commandId, answer) =>
            this.outbox.saveReceipt(
              commandId,
              answer,
              this.settings.EDGECLAW_COMPANION_RECEIPT_TTL_MS,
            ),
        },
        log: this.log,
        sandbox: this.sandbox,
      },
      this.settings.EDGECLAW_COMPANION_HOST,
      this.settings.EDGECLAW_COMPANION_PORT,
    );
    this.server = server;
    this.port = port;
    this.log("info", "companion listening", {
      port,
      instanceId: this.instanceId,
      leftovers: this.outbox.size(),
      ...(this.settings.EDGECLAW_COMPANION_SANDBOX_ONLY ? { sandboxOnly: true } : {}),
    });
    // Sandbox only: no lease to hold and no account to run, so nothing to ask the Worker.
    if (!this.settings.EDGECLAW_COMPANION_SANDBOX_ONLY) this.cycle = this.run();
  }

  /** Lease → accounts → connectors, again after every loss, until stop(). */
  private async run(): Promise<void> {
    const signal = this.controller.signal;
    while (!signal.aborted) {
      let lost!: () => void;
      const lostPromise = new Promise<void>((resolve) => (lost = resolve));
      const epoch = await this.lease.acquire(signal, () => lost());
      if (epoch === undefined) return;
      const accounts = await this.fetchAccounts(signal);
      if (!accounts) return;
      this.supervisor.startAll(accounts);
      this.statusTimer = setInterval(
        () => void this.report(),
        this.settings.EDGECLAW_COMPANION_STATUS_INTERVAL_MS,
      );
      this.statusTimer.unref();
      void this.report();
      await Promise.race([
        lostPromise,
        new Promise<void>((resolve) =>
          signal.addEventListener("abort", () => resolve(), { once: true }),
        ),
      ]);
      clearInterval(this.statusTimer);
      if (signal.aborted) return;
      await this.supervisor.stopAll("lease-lost");
    }
  }

  private async fetchAccounts(signal: AbortSignal): Promise<ConnectorAccount[] | undefined> {
    for (let attempt = 0; !signal.aborted; attempt++) {
      try {
        const answer = await this.client.request(
          "GET",
          "/internal/companion/accounts",
          undefined,
          signal,
        );
        const parsed = answer.status === 200 ? accountsSchema.safeParse(answer.json) : undefined;
        if (parsed?.success) {
          this.log("info", "accounts assigned", {
            accounts: parsed.data.accounts.map((a) => `${a.channel}/${a.accountId}`),
          });
          return parsed.data.accounts;
        }
        this.log("warn", "could not read accounts", { reason: describeAnswer(answer) });
      } catch (error) {
        if (signal.aborted) break;
        this.log("warn", "could not read accounts", {
          error: error instanceof Error ? error.message : String(error),
        });
      }
      await delay(jitteredDelay(attempt, 500, 30_000), signal);
    }
    return undefined;
  }

  private reportSoon(): void {
    if (this.statusSoon) return;
    this.statusSoon = setTimeout(() => {
      this.statusSoon = undefined;
      void this.report();
    }, 250);
    this.statusSoon.unref();
  }

  private async report(): Promise<void> {
    const epoch = this.lease.epoch;
    if (epoch === undefined) return;
    const connectors = this.supervisor
      .reports()
      .map(({ channel, accountId, state, lastEventAt, lastError, link }) => {
        const ingressError = this.ingress.lastErrors.get(`${channel}/${accountId}`);
        const error = lastError ?? (ingressError ? `ingress: ${ingressError}` : undefined);
        return {
          channel,
          accountId,
          state,
          ...(lastEventAt ? { lastEventAt } : {}),
          ...(error ? { lastError: error.slice(0, 500) } : {}),
          ...(link ? { link } : {}),
        };
      });
    try {
      const answer = await this.client.request("POST", "/internal/companion/status", {
        epoch,
        instanceId: this.instanceId,
        connectors,
      });
      if (answer.status === 409) this.lease.lost(`status refused: ${describeAnswer(answer)}`);
    } catch (error) {
      this.log("warn", "status report failed", {
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }

  /** Graceful stop (SIGTERM): connectors first, then a bounded drain of the outbox, then the lease. */
  async stop(): Promise<void> {
    this.controller.abort();
    clearInterval(this.statusTimer);
    clearTimeout(this.statusSoon);
    await this.supervisor.stopAll("shutdown");
    this.sandbox.stopAll();
    const drained = await this.ingress.flush(this.settings.EDGECLAW_COMPANION_DRAIN_MS);
    if (!drained)
      this.log("warn", "outbox not empty at stop; the rows are resent at the next start", {
        rows: this.outbox.size(),
      });
    this.ingress.stop();
    await this.report();
    await this.lease.release();
    await this.cycle?.catch(() => undefined);
    await new Promise<void>((resolve) =>
      this.server ? this.server.close(() => resolve()) : resolve(),
    );
    this.outbox.close();
  }
}

function outboundKeys(settings: CompanionSettings): Array<{ id: string; secret: string }> {
  const keys: Array<{ id: string; secret: string }> = [];
  if (settings.EDGECLAW_COMPANION_OUTBOUND_SECRET)
    keys.push({
      id: settings.EDGECLAW_COMPANION_OUTBOUND_KEY_ID ?? settings.EDGECLAW_COMPANION_KEY_ID,
      secret: settings.EDGECLAW_COMPANION_OUTBOUND_SECRET,
    });
  const previous = settings.EDGECLAW_COMPANION_OUTBOUND_PREVIOUS;
  if (previous) {
    const at = previous.indexOf(":");
    keys.push({ id: previous.slice(0, at), secret: previous.slice(at + 1) });
  }
  return keys;
}
