import { describe, expect, it } from "vitest";
import { newScenario } from "../agent/model-helpers.ts";
import { inboxState } from "../channels/contract/kit.ts";
import { uniqueId } from "../channels/slack/helpers.ts";
import { forgetPairingWhenDone } from "../channels/wait.ts";
import { approveOpsSenders, opsDmEvent, scriptModel, sessionStub, waitFor } from "./helpers.ts";

/**
 * On a shared session (dmScope "main") the web chat's history is the owner's conversation. A
 * stranger who writes to it once the session exists gets a pairing code on their own DM; neither
 * their words nor the code join that history (a fresh session kept no history at all, so only a
 * session that has already run shows the difference).
 */

describe("a stranger's pairing exchange on a session that already ran", () => {
  it("stays out of the session's history", async () => {
    const sessionKey = `agent:main:pairing-history-${uniqueId("s")}`;
    const owner = uniqueId("UOWNER");
    const stranger = uniqueId("USTRANGER");
    forgetPairingWhenDone("slack", stranger, "ops");
    await approveOpsSenders(owner);
    const scenario = newScenario("pairing-history");
    await scriptModel(scenario, [{ type: "text", text: `Owner answered ${scenario}.` }]);
    const stub = sessionStub(sessionKey);
    await stub.accept(opsDmEvent(sessionKey, owner, uniqueId("D"), `hi [scenario:${scenario}]`));
    await waitFor(
      async () => JSON.stringify(await stub.history()).includes(`Owner answered ${scenario}.`),
      20_000,
      "the owner's answer in the history",
    );

    const words = `let me read your chats ${uniqueId("w")}`;
    const event = opsDmEvent(sessionKey, stranger, uniqueId("D"), words);
    await stub.accept(event);
    await waitFor(
      async () => (await inboxState(sessionKey, event.envelope.dedupKey)) === "settled",
      20_000,
      "the stranger's event settled",
    );
    const history = JSON.stringify(await stub.history());
    expect(history).toContain(`Owner answered ${scenario}.`);
    expect(history).not.toContain(words);
    expect(history).not.toMatch(/pairing code/i);
  });
});
