import { describe, expect, it } from "vitest";
import {
  ConnectionGate,
  PostgresUnavailableError,
  type GateLimits,
} from "../../functions/db/gate.ts";

const limits: GateLimits = { maxConnections: 1, outageBackoffMaxMs: 30_000, leaseMs: 45_000 };
/** How a reset Durable Object's waiter behaves: its next timer never fires. */
const frozen = () => new Promise<void>(() => {});

function clockedGate() {
  const clock = { t: 1_000_000 };
  return { gate: new ConnectionGate("test-postgres", () => clock.t), clock };
}

/** Resolves to the permit, or to "still waiting" if the gate has not granted one within `ms`. */
function within<T>(promise: Promise<T>, ms = 500): Promise<T | "still waiting"> {
  return Promise.race([
    promise,
    new Promise<"still waiting">((resolve) => setTimeout(() => resolve("still waiting"), ms)),
  ]);
}

describe("connection gate leases", () => {
  it("gives a slot whose holder vanished without releasing it to the next caller once its lease lapses", async () => {
    const { gate, clock } = clockedGate();
    await gate.acquire(limits); // never released: its object was reset mid-pass
    expect(await within(gate.acquire(limits), 200)).toBe("still waiting");
    clock.t += limits.leaseMs;
    const next = await within(gate.acquire(limits));
    expect(next).not.toBe("still waiting");
    expect(gate.open).toBe(1);
  });

  it("keeps a slot its holder keeps touching", async () => {
    const { gate, clock } = clockedGate();
    const held = await gate.acquire(limits);
    clock.t += limits.leaseMs - 1;
    held.touch();
    clock.t += limits.leaseMs - 1;
    expect(await within(gate.acquire(limits), 200)).toBe("still waiting");
    held.release();
  });

  it("drops the queue place of a waiter that stopped polling, so later callers are not stuck behind it", async () => {
    const { gate, clock } = clockedGate();
    const first = await gate.acquire(limits);
    void gate.acquire(limits, frozen); // queued first, then its object is reset
    first.release();
    const late = gate.acquire(limits);
    expect(await within(late, 200)).toBe("still waiting");
    clock.t += 2_000;
    expect(await within(late)).not.toBe("still waiting");
  });

  it("ends a probe whose holder vanished, so Postgres is tried again instead of failing fast forever", async () => {
    const { gate, clock } = clockedGate();
    gate.failed(new Error("connect ECONNREFUSED"), limits);
    clock.t += 1_000; // the first backoff has passed: the next caller is the probe
    await gate.acquire(limits); // the probe's object is reset before it reports
    await expect(gate.acquire(limits)).rejects.toBeInstanceOf(PostgresUnavailableError);
    clock.t += limits.leaseMs;
    const retry = await within(gate.acquire(limits));
    expect(retry).not.toBe("still waiting");
  });

  it("counts a slow holder again when it comes back, and frees its slot exactly once", async () => {
    const { gate, clock } = clockedGate();
    const slow = await gate.acquire({ ...limits, maxConnections: 2 });
    clock.t += limits.leaseMs;
    const other = await gate.acquire({ ...limits, maxConnections: 2 });
    expect(gate.open).toBe(1);
    slow.touch();
    expect(gate.open).toBe(2);
    slow.release();
    slow.release();
    expect(gate.open).toBe(1);
    other.release();
    expect(gate.open).toBe(0);
  });
});
