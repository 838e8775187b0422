/**
 * Discord Gateway → companion → Worker figures, on loopback with every real part
 * (companion/test/discord-stack.ts): a fake Gateway, the companion as its own Node process
 * (connector, SQLite outbox, batching), a local `npm run dev` Worker (parse, durable accept in the
 * SessionDO, PGlite). Each event is a MESSAGE_CREATE in a guild channel the config does not list, so
 * access control drops it after the durable accept and no agent run competes for the CPU: the
 * accept path alone.
 *   events/s   N dispatches sent at once; the clock stops when the connector's stored sequence (in
 *              the Worker's companion state, written only after the Worker answered "stored")
 *              reaches the last one. The sequence is written at most once a second, so short runs
 *              understate the rate a little.
 *   RSS        the companion process's resident memory idle and right after the burst.
 *   npx tsx companion/bench/discord-gateway.ts [--events 2000]
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { signRequest } from "../../functions/channels/companion/signature.ts";
import { messageCreateData } from "../../functions/channels/discord/simulate/discord-gateway.ts";
import { startDiscordStack, waitUntil } from "../test/discord-stack.ts";

const { values } = parseArgs({ options: { events: { type: "string", default: "2000" } } });
const events = Math.min(20_000, Math.max(10, Number(values.events)));

const stack = await startDiscordStack({
  allowFrom: ["1200000000000000001"],
  guildChannels: { "1300000000000000099": {} },
});
try {
  const live = await waitUntil(
    async () => stack.gateway.live,
    180_000,
    "the companion's Gateway session",
  );
  const storedSeq = async (): Promise<number> => {
    const path = "/internal/companion/state?channel=discord&accountId=default&key=seq";
    const headers = await signRequest(stack.key, {
      method: "GET",
      path,
      body: new Uint8Array(),
      timestamp: Math.floor(Date.now() / 1000),
    });
    const res = await fetch(`${stack.worker.url}${path}`, { headers });
    return Number(((await res.json()) as { value?: string }).value ?? 0);
  };
  const rss = () => {
    const status = readFileSync(`/proc/${stack.companion.child.pid}/status`, "utf8");
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
  };

  // Warm-up: the first events open Durable Objects and connections.
  let last = 0;
  for (let i = 0; i < 50; i++)
    last = stack.gateway.dispatch(
      "MESSAGE_CREATE",
      messageCreateData(String(1900000000000000000n + BigInt(i)), `warm ${i}`),
      live,
    );
  await waitUntil(async () => (await storedSeq()) >= last || undefined, 120_000, "warm-up stored");
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  const idleRss = rss();

  const started = performance.now();
  for (let i = 0; i < events; i++)
    last = stack.gateway.dispatch(
      "MESSAGE_CREATE",
      messageCreateData(String(1910000000000000000n + BigInt(i)), `bench ${i}`),
      live,
    );
  let peakRss = rss();
  await waitUntil(
    async () => {
      peakRss = Math.max(peakRss, rss());
      return (await storedSeq()) >= last || undefined;
    },
    600_000,
    "every event stored",
  );
  const seconds = (performance.now() - started) / 1000;

  console.log(
    `\nedgeclaw Discord Gateway benchmark — loopback, local workerd, one companion process\n`,
  );
  console.log(`| figure | value |\n| --- | --- |`);
  console.log(`| events dispatched | ${events} |`);
  console.log(
    `| Gateway → companion → durable accept | ${(events / seconds).toFixed(0)} events/s (${seconds.toFixed(1)} s) |`,
  );
  console.log(`| companion RSS idle | ${idleRss.toFixed(0)} MiB |`);
  console.log(`| companion RSS under load (peak) | ${peakRss.toFixed(0)} MiB |`);
} finally {
  await stack.stop();
}
