import { describe, expect, it } from "vitest";
import { newScenario, recorded } from "../../agent/model-helpers.ts";
import {
  type ChannelKit,
  type ContractCase,
  inboxState,
  landingOf,
  maxBodyBytes,
  post,
  type RefusedRequest,
} from "./kit.ts";
import { DM_KITS } from "./kits/index.ts";

/**
 * The contract every webhook channel keeps before anything is stored (workers/webhooks.ts owns the
 * order): a forged or stale request is 401, an oversized one 413, a signed body that is not the
 * platform's shape 400 — and none of them leaves an inbox row or reaches the model. "Nothing
 * stored" is checked where the request's well-formed twin would land (the channel's own parse and
 * the config's routing), so a refusal that stored under another key would still fail here.
 */

async function refusedAndNothingStored(
  kit: ChannelKit,
  refused: RefusedRequest,
  scenario: string,
  status: number,
): Promise<void> {
  const landing = await landingOf(kit.channel, refused.twin);
  expect(landing.length, "the twin must parse to at least one routed event").toBeGreaterThan(0);
  const res = await post(refused.request);
  expect(res.status, await res.clone().text()).toBe(status);
  if (status !== 200) expect(res.headers.get("x-openclaw-delivery-accepted")).toBeNull();
  for (const { sessionKey, dedupKey } of landing)
    expect(await inboxState(sessionKey, dedupKey), `${dedupKey} in ${sessionKey}`).toBeUndefined();
  expect(await recorded(scenario)).toEqual([]);
}

describe.each(DM_KITS.map((kit) => [kit.channel, kit] as const))("%s refuses", (_name, kit) => {
  /** The status the contract asks for, or the one a listed exception names instead. */
  const expected = (name: ContractCase, status: number) =>
    kit.exceptions?.[name]?.insteadStatus ?? status;

  it("a forged request with 401, nothing stored, no model call", async () => {
    const scenario = newScenario(`contract-forged-${kit.channel}`);
    const forged = await kit.forged(`forged [scenario:${scenario}]`);
    await refusedAndNothingStored(kit, forged, scenario, expected("forged", 401));
  });

  it("a stale request with 401, nothing stored, no model call", async () => {
    const exception = kit.exceptions?.stale;
    if (!kit.stale) {
      // Only a listed exception may leave the case out (exceptions.test.ts lists them).
      expect(exception, `${kit.channel} has no stale request and no exception`).toBeDefined();
      return;
    }
    const scenario = newScenario(`contract-stale-${kit.channel}`);
    const stale = await kit.stale(`stale [scenario:${scenario}]`);
    await refusedAndNothingStored(kit, stale, scenario, expected("stale", 401));
  });

  it("an oversized request with 413, nothing stored, no model call", async () => {
    const scenario = newScenario(`contract-big-${kit.channel}`);
    const probe = await kit.dm("allowed", "x");
    const limit = maxBodyBytes(kit.channel, probe.request.path);
    const big = await kit.oversized(`big [scenario:${scenario}]`, limit);
    expect(new TextEncoder().encode(big.request.body).length).toBeGreaterThan(limit);
    await refusedAndNothingStored(kit, big, scenario, expected("oversized", 413));
  });

  it("a signed body that is not the platform's shape with 400", async () => {
    const res = await post(await kit.malformed());
    expect(res.status, await res.clone().text()).toBe(expected("malformed", 400));
    expect(res.headers.get("x-openclaw-delivery-accepted")).toBeNull();
  });
});
