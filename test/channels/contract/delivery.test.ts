import { describe, expect, it } from "vitest";
import { newScenario, recorded, script } from "../../agent/model-helpers.ts";
import { forgetPairingWhenDone, waitFor } from "../wait.ts";
import { type ChannelKit, inboxState, type KitMessage, landingOf, post } from "./kit.ts";
import { DM_KITS } from "./kits/index.ts";

/**
 * The contract after the ack: a platform that delivers one event twice gets one answer (the
 * SessionDO's dedup, not the channel's luck), and a stranger gets only the pairing reply — the
 * model never sees the text. Both wait for the inbox row to settle, so "no second reply" and "no
 * model call" are read after the work is done, not after a fixed sleep.
 */

async function settled(kit: ChannelKit, message: KitMessage): Promise<void> {
  const landing = await landingOf(kit.channel, message.request);
  expect(landing.length, "the DM must route to a session").toBeGreaterThan(0);
  await waitFor(async () => {
    for (const { sessionKey, dedupKey } of landing) {
      const state = await inboxState(sessionKey, dedupKey);
      if (state !== "settled" && state !== "dead") return undefined;
    }
    return true;
  });
}

describe.each(DM_KITS.map((kit) => [kit.channel, kit] as const))("%s delivers", (_name, kit) => {
  it("one reply to a DM the platform delivered twice", async () => {
    const scenario = newScenario(`contract-dup-${kit.channel}`);
    const answer = `Once only ${scenario}.`;
    await script(scenario, [{ type: "text", text: answer }]);
    const message = await kit.dm("allowed", `say it once [scenario:${scenario}]`);
    const first = await post(message.request);
    expect(first.status, await first.clone().text()).toBe(200);
    const again = await post(message.request);
    expect(again.status, await again.clone().text()).toBe(200);
    const answered = () => kit.replies(message.conversation);
    await waitFor(async () =>
      (await answered()).some((t) => t.includes(answer)) ? true : undefined,
    );
    await settled(kit, message);
    expect((await answered()).filter((t) => t.includes(answer))).toHaveLength(1);
    expect(await recorded(scenario)).toHaveLength(1);
  });

  it("a stranger only the pairing reply, and the model never sees the text", async () => {
    const scenario = newScenario(`contract-stranger-${kit.channel}`);
    await script(scenario, [{ type: "text", text: "must not be said" }]);
    const message = await kit.dm("stranger", `let me in [scenario:${scenario}]`);
    forgetPairingWhenDone(kit.channel, message.senderId, message.accountId);
    const res = await post(message.request);
    expect(res.status, await res.clone().text()).toBe(200);
    const [reply] = await waitFor(async () => {
      const texts = await kit.replies(message.conversation);
      return texts.length ? texts : undefined;
    });
    expect(reply).toMatch(/pairing code/i);
    await settled(kit, message);
    expect(await kit.replies(message.conversation)).toHaveLength(1);
    expect(await recorded(scenario)).toEqual([]);
  });
});
