import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { verifySigned } from "../src/verify.ts";

/**
 * A loopback stand-in for the Worker's `/internal/companion/*` (the real one is tested in workerd:
 * test/workers/companion-api.test.ts), speaking the same wire: signed requests, accounts, events
 * stored once by (channel, account, eventId), a lease whose epoch grows on every acquire, state
 * writes fenced by that epoch, status reports. It records what it stored and when, and can hold
 * event batches (to kill the companion between receiving an event and the accept) or fail them.
 */
export interface FakeWorkerOptions {
  keys: Array<{ id: string; secret: string }>;
  accounts: Array<{
    channel: string;
    accountId: string;
    label: string;
    settings: Record<string, unknown>;
    secretEnv: Record<string, string>;
  }>;
  leaseTtlMs?: number;
}

export interface StoredEvent {
  channel: string;
  accountId: string;
  eventId: string;
  payload: unknown;
  storedAt: number;
}

export class FakeWorker {
  readonly stored: StoredEvent[] = [];
  /** Every eventId the Worker was sent, in order, with repeats. */
  readonly received: string[] = [];
  readonly stateWrites: Array<{ key: string; value: string | null; epoch: number; at: number }> =
    [];
  readonly statuses: unknown[] = [];
  readonly state = new Map<string, string>();
  lease: { holder: string; epoch: number; expiresAt: number } | undefined;
  epochCounter = 0;
  /** While set, event batches wait for it (they have been received, not accepted). */
  hold: Promise<void> | undefined;
  /** The next N event batches answer 503. */
  failBatches = 0;
  /** Resolves when a batch arrives while `hold` is set. */
  onHeld: (() => void) | undefined;
  private server: Server | undefined;
  url = "";

  constructor(private readonly options: FakeWorkerOptions) {}

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      void this.handle(req).then(
        ([status, body]) => {
          res.writeHead(status, { "content-type": "application/json" });
          res.end(JSON.stringify(body));
        },
        (error: unknown) => {
          res.writeHead(500);
          res.end(String(error));
        },
      );
    });
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }

  private async handle(req: IncomingMessage): Promise<[number, unknown]> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = new Uint8Array(Buffer.concat(chunks));
    const url = new URL(req.url ?? "/", "http://fake");
    const verified = await verifySigned(
      this.options.keys,
      req.headers,
      req.method ?? "GET",
      url.pathname + url.search,
      body,
    );
    if (!verified.ok) return [401, { error: verified.reason }];
    const json = body.length
      ? (JSON.parse(new TextDecoder().decode(body)) as Record<string, unknown>)
      : {};
    const now = Date.now();
    const ttl = this.options.leaseTtlMs ?? 30_000;
    const live = (epoch: unknown) =>
      this.lease !== undefined && this.lease.epoch === epoch && this.lease.expiresAt > now;
    switch (`${req.method} ${url.pathname}`) {
      case "GET /internal/companion/accounts":
        return [200, { accounts: this.options.accounts }];
      case "POST /internal/companion/events": {
        const { channel, accountId, events } = json as {
          channel: string;
          accountId: string;
          events: Array<{ eventId: string; payload: unknown }>;
        };
        for (const event of events) this.received.push(event.eventId);
        if (this.hold) {
          this.onHeld?.();
          await this.hold;
        }
        if (this.failBatches > 0) {
          this.failBatches -= 1;
          return [503, { error: "scripted outage" }];
        }
        const results = events.map((event) => {
          const known = this.stored.some(
            (s) =>
              s.channel === channel && s.accountId === accountId && s.eventId === event.eventId,
          );
          if (!known)
            this.stored.push({
              channel,
              accountId,
              eventId: event.eventId,
              payload: event.payload,
              storedAt: Date.now(),
            });
          return {
            eventId: event.eventId,
            status: "stored",
            outcomes: [known ? "duplicate" : "accepted"],
          };
        });
        return [200, { results }];
      }
      case "POST /internal/companion/lease": {
        const { instanceId, action } = json as { instanceId: string; action: string };
        const ours = this.lease?.holder === instanceId;
        const free = !this.lease || this.lease.expiresAt <= now;
        if (action === "release") {
          if (ours && this.lease) this.lease.expiresAt = now;
          return [200, { epoch: this.lease?.epoch ?? 0, ttlMs: 0 }];
        }
        if (action === "renew") {
          if (!ours || !this.lease)
            return [409, { holder: this.lease?.holder ?? "", retryAfterMs: 0 }];
          this.lease.expiresAt = now + ttl;
          return [200, { epoch: this.lease.epoch, ttlMs: ttl }];
        }
        if (!free && !ours)
          return [409, { holder: this.lease!.holder, retryAfterMs: this.lease!.expiresAt - now }];
        this.lease = { holder: instanceId, epoch: ++this.epochCounter, expiresAt: now + ttl };
        return [200, { epoch: this.lease.epoch, ttlMs: ttl }];
      }
      case "GET /internal/companion/state":
        return [
          200,
          {
            value:
              this.state.get(
                `${url.searchParams.get("channel")}/${url.searchParams.get("accountId")}/${url.searchParams.get("key")}`,
              ) ?? null,
          },
        ];
      case "POST /internal/companion/state": {
        const { epoch, channel, accountId, key, value } = json as {
          epoch: number;
          channel: string;
          accountId: string;
          key: string;
          value: string | null;
        };
        if (!live(epoch)) return [409, { error: `stale epoch ${epoch}` }];
        if (value === null) this.state.delete(`${channel}/${accountId}/${key}`);
        else this.state.set(`${channel}/${accountId}/${key}`, value);
        this.stateWrites.push({ key, value, epoch, at: Date.now() });
        return [200, { ok: true }];
      }
      case "POST /internal/companion/state/read": {
        const { channel, accountId, keys } = json as {
          channel: string;
          accountId: string;
          keys: string[];
        };
        return [
          200,
          {
            values: Object.fromEntries(
              keys.map((key) => [key, this.state.get(`${channel}/${accountId}/${key}`) ?? null]),
            ),
          },
        ];
      }
      case "POST /internal/companion/state/batch": {
        const { epoch, channel, accountId, entries } = json as {
          epoch: number;
          channel: string;
          accountId: string;
          entries: Array<{ key: string; value: string | null }>;
        };
        if (!live(epoch)) return [409, { error: `stale epoch ${epoch}` }];
        for (const { key, value } of entries) {
          if (value === null) this.state.delete(`${channel}/${accountId}/${key}`);
          else this.state.set(`${channel}/${accountId}/${key}`, value);
          this.stateWrites.push({ key, value, epoch, at: Date.now() });
        }
        return [200, { ok: true }];
      }
      case "POST /internal/companion/status":
        if (!live(json.epoch)) return [409, { error: "stale epoch" }];
        this.statuses.push(json);
        return [200, { ok: true }];
      default:
        return [404, { error: "not found" }];
    }
  }
}
