/** Slack's request bodies and timestamps, as the fake reads them. */

export function parseArgs(body: string, contentType: string | undefined): Record<string, unknown> {
  if (!body) return {};
  if ((contentType ?? "").includes("application/json"))
    return JSON.parse(body) as Record<string, unknown>;
  const args: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(body)) {
    // @slack/web-api JSON-encodes nested values (metadata, blocks) inside the form.
    args[key] = /^[[{]/.test(value) ? safeJson(value) : value;
  }
  return args;
}

/** Slack timestamps ("seconds.micros") compared as numbers of microseconds. */
export function compareTs(a: string, b: string): number {
  const micros = (ts: string) => {
    const [seconds = "0", fraction = ""] = ts.split(".");
    return BigInt(seconds) * 1_000_000n + BigInt(`${fraction}000000`.slice(0, 6));
  };
  const diff = micros(a) - micros(b);
  return diff === 0n ? 0 : diff < 0n ? -1 : 1;
}

export function safeJson(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}
