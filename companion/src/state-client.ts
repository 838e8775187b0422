import * as z from "zod";
import { describeAnswer, type WorkerClient } from "./worker-client.ts";

/**
 * A connector's durable state (cursor, resume token, session id) in the Worker's companion Durable
 * Object. Writes carry this process's lease epoch; a 409 means another instance took over, which
 * the lease keeper turns into "stop every connector".
 */
export class StaleEpochError extends Error {}

const valueSchema = z.object({ value: z.string().nullable() });
const valuesSchema = z.object({ values: z.record(z.string(), z.string().nullable()) });
/** The Worker's bound on keys per batch (functions/channels/companion/wire.ts STATE_BATCH_MAX_KEYS). */
const BATCH_KEYS = 1000;

export class StateClient {
  constructor(
    private readonly client: WorkerClient,
    private readonly epoch: () => number | undefined,
    private readonly onStale: (reason: string) => void,
  ) {}

  async get(channel: string, accountId: string, key: string): Promise<string | undefined> {
    const query = new URLSearchParams({ channel, accountId, key });
    const answer = await this.client.request("GET", `/internal/companion/state?${query}`);
    const parsed = answer.status === 200 ? valueSchema.safeParse(answer.json) : undefined;
    if (!parsed?.success) throw new Error(`state read failed: ${describeAnswer(answer)}`);
    return parsed.data.value ?? undefined;
  }

  /** The values of many keys (absent = unset), read in batches the Worker takes. */
  async getMany(channel: string, accountId: string, keys: string[]): Promise<Map<string, string>> {
    const found = new Map<string, string>();
    for (let start = 0; start < keys.length; start += BATCH_KEYS) {
      const answer = await this.client.request("POST", "/internal/companion/state/read", {
        channel,
        accountId,
        keys: keys.slice(start, start + BATCH_KEYS),
      });
      const parsed = answer.status === 200 ? valuesSchema.safeParse(answer.json) : undefined;
      if (!parsed?.success) throw new Error(`state read failed: ${describeAnswer(answer)}`);
      for (const [key, value] of Object.entries(parsed.data.values))
        if (value !== null) found.set(key, value);
    }
    return found;
  }

  /**
   * Writes many keys under this process's epoch, each request one transaction on the Worker; a
   * set larger than one request (1000 keys) goes as several, in order.
   */
  async putMany(
    channel: string,
    accountId: string,
    entries: Array<{ key: string; value: string | null }>,
  ): Promise<void> {
    for (let start = 0; start < entries.length; start += BATCH_KEYS)
      await this.write("/internal/companion/state/batch", {
        channel,
        accountId,
        entries: entries.slice(start, start + BATCH_KEYS),
      });
  }

  async put(channel: string, accountId: string, key: string, value: string | null): Promise<void> {
    await this.write("/internal/companion/state", { channel, accountId, key, value });
  }

  private async write(path: string, body: Record<string, unknown>): Promise<void> {
    const epoch = this.epoch();
    if (epoch === undefined) throw new StaleEpochError("no lease held: state write refused");
    const answer = await this.client.request("POST", path, { epoch, ...body });
    if (answer.status === 409) {
      this.onStale(describeAnswer(answer));
      throw new StaleEpochError(`state write refused: ${describeAnswer(answer)}`);
    }
    if (answer.status !== 200) throw new Error(`state write failed: ${describeAnswer(answer)}`);
  }
}
