import { spawn } from "node:child_process";
import { availableParallelism } from "node:os";
import { createInterface } from "node:readline";

/**
 * `npm run test:workerd`: the workerd suite as independent shards run side by side. Each shard is
 * its own `vitest run --shard=i/n` process with its own global setup (Postgres, fake platforms,
 * fake models on their own loopback ports) and one workerd that runs its files one after another
 * (vitest.config.ts: isolate false, so the runtime and its module cache are started once per shard,
 * not once per file). Shards share nothing, so a file sees only its own shard's traffic; most of a
 * test's time is spent waiting on alarms, debounce and retry timers, so shards overlap well even
 * on two cores.
 *
 * EDGECLAW_TEST_SHARDS sets the count (default: 2, at most the core count + 1). Arguments after
 * `--` go to every shard's vitest (a file filter, `-t`, a reporter).
 */

const DEFAULT_SHARDS = 2;

function shardCount(): number {
  const raw = process.env.EDGECLAW_TEST_SHARDS;
  if (raw === undefined || raw === "") return Math.min(DEFAULT_SHARDS, availableParallelism() + 1);
  const count = Number(raw);
  if (!Number.isInteger(count) || count < 1) {
    console.error(`EDGECLAW_TEST_SHARDS must be a whole number ≥ 1, not ${JSON.stringify(raw)}`);
    process.exit(2);
  }
  return count;
}

/** Runs one shard, its output lines prefixed with the shard's number so interleaved logs stay readable. */
function runShard(index: number, count: number, extra: string[]): Promise<number> {
  const shard = count > 1 ? [`--shard=${index}/${count}`, "--passWithNoTests"] : [];
  const args = ["vitest", "run", ...shard, ...extra];
  const child = spawn("npx", args, {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, FORCE_COLOR: process.env.FORCE_COLOR ?? "1" },
  });
  const prefix = count > 1 ? `[${index}/${count}] ` : "";
  for (const [stream, sink] of [
    [child.stdout, process.stdout],
    [child.stderr, process.stderr],
  ] as const) {
    createInterface({ input: stream }).on("line", (line) => sink.write(`${prefix}${line}\n`));
  }
  return new Promise((resolve) => {
    child.once("error", () => resolve(127));
    child.once("exit", (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
}

async function main(): Promise<number> {
  const count = shardCount();
  const extra = process.argv.slice(2);
  const started = performance.now();
  const codes = await Promise.all(
    Array.from({ length: count }, (_, i) => runShard(i + 1, count, extra)),
  );
  const seconds = ((performance.now() - started) / 1000).toFixed(0);
  const failed = codes.flatMap((code, i) => (code === 0 ? [] : [`${i + 1}/${count}`]));
  console.log(
    failed.length
      ? `\nworkerd tests: shard ${failed.join(", ")} failed (${seconds} s, ${count} shards)`
      : `\nworkerd tests: ${count} shards passed in ${seconds} s`,
  );
  return codes.find((code) => code !== 0) ?? 0;
}

main().then((code) => process.exit(code));
