/** Slack's timestamps, as the fake orders them. */

/** Slack timestamps ("seconds.micros") compared as numbers of microseconds. */
export function compareTs(a: string, b: string): number {
  const micros = (ts: string) => {
    const [seconds = "0", fraction = ""] = ts.split(".");
    return BigInt(seconds) * 1_000_000n + BigInt(`${fraction}000000`.slice(0, 6));
  };
  const diff = micros(a) - micros(b);
  return diff === 0n ? 0 : diff < 0n ? -1 : 1;
}
