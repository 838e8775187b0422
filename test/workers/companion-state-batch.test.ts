import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { signRequest } from "../../functions/channels/companion/signature.ts";
import { TEST_WHATSAPP } from "../../functions/channels/whatsapp/test-fixtures.ts";

/**
 * `/internal/companion/state/batch` and `/state/read`: many keys of one account under one lease
 * epoch, all written or none, and a stale epoch refused with nothing written — what the WhatsApp
 * connector's auth state (Baileys creds and Signal keys) rests on. Key "whatsapp" is its own
 * deployment, so its lease is this file's alone.
 */

const KEY = TEST_WHATSAPP.companionKey;

async function post(path: string, body: unknown): Promise<Response> {
  const text = JSON.stringify(body);
  const headers = await signRequest(KEY, {
    method: "POST",
    path,
    body: new TextEncoder().encode(text),
    timestamp: Math.floor(Date.now() / 1000),
  });
  return SELF.fetch(`https://edgeclaw.test${path}`, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json" },
    body: text,
  });
}

const lease = async (instanceId: string, action: "acquire" | "release") =>
  (await (await post("/internal/companion/lease", { instanceId, action })).json()) as {
    epoch: number;
  };
const read = async (keys: string[]) =>
  (
    (await (
      await post("/internal/companion/state/read", { channel: "whatsapp", accountId: "team", keys })
    ).json()) as { values: Record<string, string | null> }
  ).values;
const batch = (epoch: number, entries: Array<{ key: string; value: string | null }>) =>
  post("/internal/companion/state/batch", {
    epoch,
    channel: "whatsapp",
    accountId: "team",
    entries,
  });

describe("companion state in batches", () => {
  it("writes every entry of a batch under the live epoch, deletes with null, and refuses a stale epoch or an oversize value with nothing written", async () => {
    const first = await lease("batch-a", "acquire");
    const prefix = `t${Date.now().toString(36)}`;
    const keys = Array.from({ length: 300 }, (_, i) => `${prefix}:pre-key:${i}`);
    expect(
      (
        await batch(
          first.epoch,
          keys.map((key) => ({ key, value: `v-${key}` })),
        )
      ).status,
    ).toBe(200);
    const values = await read([...keys, `${prefix}:absent`]);
    expect(Object.values(values).filter((v) => v !== null)).toHaveLength(300);
    expect(values[`${prefix}:absent`]).toBeNull();

    // One value past companion.maxStateValueBytes: 413, and the other entries of the batch are not written either.
    const big = await batch(first.epoch, [
      { key: `${prefix}:small`, value: "fits" },
      { key: `${prefix}:big`, value: "x".repeat(64 * 1024 + 1) },
    ]);
    expect(big.status).toBe(413);
    expect((await read([`${prefix}:small`]))[`${prefix}:small`]).toBeNull();

    expect((await batch(first.epoch, [{ key: keys[0]!, value: null }])).status).toBe(200);
    expect((await read([keys[0]!]))[keys[0]!]).toBeNull();

    // Another instance takes the lease: the first one's epoch writes nothing any more.
    await lease("batch-a", "release");
    const second = await lease("batch-b", "acquire");
    expect(second.epoch).toBeGreaterThan(first.epoch);
    const stale = await batch(first.epoch, [{ key: keys[1]!, value: "rolled back" }]);
    expect(stale.status).toBe(409);
    expect((await read([keys[1]!]))[keys[1]!]).toBe(`v-${keys[1]}`);
    expect((await batch(second.epoch, [{ key: keys[1]!, value: "new" }])).status).toBe(200);
    await lease("batch-b", "release");
  });

  it("refuses a batch of more than 1000 keys, and an account the key may not speak for", async () => {
    const { epoch } = await lease("batch-c", "acquire");
    const many = Array.from({ length: 1001 }, (_, i) => ({ key: `k${i}`, value: "v" }));
    expect((await batch(epoch, many)).status).toBe(400);
    const foreign = await post("/internal/companion/state/batch", {
      epoch,
      channel: "matrix",
      accountId: "default",
      entries: [{ key: "since", value: "x" }],
    });
    expect(foreign.status).toBe(403);
    await lease("batch-c", "release");
  });
});
