import * as z from "zod";
import { describeAnswer, type WorkerClient } from "./worker-client.ts";

/**
 * A connector's durable state (cursor, resume token, session id) in the Worker's companion Durable
 * Object. Writes carry this process's lease epoch; a 409 means another instance took over, which
 * the lease keeper turns into "stop every connector".
 */
export class StaleEpochError extends Error {}

const valueSchema = z.object({ value: z.string().nullable() });

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

  async put(channel: string, accountId: string, key: string, value: string | null): Promise<void> {
    const epoch = this.epoch();
    if (epoch === undefined) throw new StaleEpochError("no lease held: state write refused");
    const answer = await this.client.request("POST", "/internal/companion/state", {
      epoch,
      channel,
      accountId,
      key,
      value,
    });
    if (answer.status === 409) {
      this.onStale(describeAnswer(answer));
      throw new StaleEpochError(`state write refused: ${describeAnswer(answer)}`);
    }
    if (answer.status !== 200) throw new Error(`state write failed: ${describeAnswer(answer)}`);
  }
}
