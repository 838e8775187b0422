import { env } from "cloudflare:test";
import { and, eq } from "drizzle-orm";
import { onTestFinished } from "vitest";
import type { Env } from "../../workers/env.ts";
import { withDb } from "../../functions/db/client.ts";
import { pairingRequests } from "../../functions/db/schema.ts";

/** Waiting in channel tests: the pipeline answers asynchronously (queue, SessionDO, outbox), so tests poll the fakes. */

export const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `probe` every 100 ms until it returns a value (not undefined); throws after `timeoutMs`. */
export async function waitFor<T>(
  probe: () => Promise<T | undefined>,
  timeoutMs = 20_000,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error("timed out waiting");
    await settle(100);
  }
}

/**
 * Removes a stranger's pending pairing request when the test ends: an account holds at most 3
 * pending requests, and every test file of a channel shares its accounts.
 */
export function forgetPairingWhenDone(
  channel: string,
  senderId: string | number,
  accountId = "default",
): void {
  onTestFinished(async () => {
    await withDb(env as unknown as Env, (db) =>
      db
        .delete(pairingRequests)
        .where(
          and(
            eq(pairingRequests.channel, channel),
            eq(pairingRequests.accountId, accountId),
            eq(pairingRequests.senderId, String(senderId)),
          ),
        ),
    );
  });
}

/** `forgetPairingWhenDone` for one channel, with the account its tests use most. */
export function pairingForgetter(
  channel: string,
  defaultAccountId = "default",
): (senderId: string | number, accountId?: string) => void {
  return (senderId, accountId = defaultAccountId) =>
    forgetPairingWhenDone(channel, senderId, accountId);
}
