import { parseArgs } from "node:util";
import { measure, type Figures } from "./measure.ts";

/**
 * What every channel bench (scripts/bench/<channel>.ts) shares: its bounded command-line counts, the
 * warm-up and /health baseline, waiting for a reply to land in the fake platform, and the count of
 * refused requests by reason. The channel's own payloads, signatures and checks stay in its bench.
 */

/** `--requests 400 --concurrency 8 --replies 20`, each capped so a typo cannot flood the machine. */
export function benchArgs(): { requests: number; concurrency: number; replies: number } {
  const { values } = parseArgs({
    options: {
      requests: { type: "string", default: "400" },
      concurrency: { type: "string", default: "8" },
      replies: { type: "string", default: "20" },
    },
  });
  return {
    requests: Math.min(5000, Number(values.requests)),
    concurrency: Math.min(64, Number(values.concurrency)),
    replies: Math.min(200, Number(values.replies)),
  };
}

const health = (instanceUrl: string) => async () => (await fetch(`${instanceUrl}/health`)).ok;

/** Warms the isolate and the channel's path (40 requests, 4 at a time), then /health the same way. */
export async function warmUp(
  instanceUrl: string,
  send: (index: number) => Promise<boolean>,
): Promise<void> {
  await measure("warm-up", 40, 4, send);
  await measure("warm-up", 40, 4, health(instanceUrl));
}

/** The do-nothing baseline every other row is compared with. */
export function healthBaseline(
  instanceUrl: string,
  requests: number,
  concurrency: number,
): Promise<Figures> {
  return measure("GET /health (baseline)", requests, concurrency, health(instanceUrl));
}

/** Polls the fake platform every 5 ms until `landed` (the reply is there), at most `timeoutMs`. */
export async function replyLands(
  landed: () => Promise<boolean>,
  timeoutMs = 30_000,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await landed()) return true;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return false;
}

/** Why requests were refused (status and body, or no answer), counted, so a failure count is never a mystery. */
export class Refusals {
  readonly #counts = new Map<string, number>();

  note(reason: string): void {
    this.#counts.set(reason, (this.#counts.get(reason) ?? 0) + 1);
  }

  /** How many refusals were noted so far (take the difference around a run to count its own). */
  get total(): number {
    return [...this.#counts.values()].reduce((sum, count) => sum + count, 0);
  }

  /** Sends one request; its HTTP status (0: no answer). Anything but 200 is noted. */
  async send(url: string, init: RequestInit): Promise<number> {
    try {
      const res = await fetch(url, init);
      const text = await res.text();
      if (res.status !== 200) this.note(`${res.status} ${text.slice(0, 120)}`);
      return res.status;
    } catch (error) {
      const cause =
        error instanceof Error && error.cause !== undefined ? ` ${String(error.cause)}` : "";
      this.note(
        `no answer: ${error instanceof Error ? error.message : String(error)}${cause}`.slice(
          0,
          160,
        ),
      );
      return 0;
    }
  }

  print(): void {
    for (const [reason, count] of this.#counts) console.log(`refused ×${count}: ${reason}`);
  }
}
