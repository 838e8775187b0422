import { describe, expect, it } from "vitest";
import { channelDefinitions } from "../../../functions/channels/registry.ts";
import { waitFor } from "../wait.ts";
import { NO_SYSTEM_EVENTS, SYSTEM_KITS } from "./kits/index.ts";
import {
  clearQueued,
  type Conversation,
  deliver,
  judge,
  parseDelivery,
  routingFacts,
  sessionView,
  type SystemEventKit,
} from "./system-kit.ts";

/**
 * Nobody gets in through a side door (DESIGN): every system event a channel parses — edits,
 * deletes, reactions, joins, button clicks — gets the access decision a message from that sender in
 * that conversation gets. For each channel in the registry, each conversation its kit names and each
 * event kind, from a sender the config admits and one it refuses:
 * - parsed by the channel's own parser, the event carries the message's routing facts (chat type,
 *   peer, parent, thread, team, sender, roles) and lands in the message's session;
 * - the access check the SessionDO runs (from the config) admits it exactly when it admits the message;
 * - delivered through the Worker, an admitted one is kept as context for the next run (a queued
 *   system-event line) and starts no run; a refused one is settled with nothing kept and no reply.
 */

/** What the event must become: what the message of an allowed / refused sender became, or (a senderless kind) whatever the message did. */
type Expected = "allowed" | "refused" | "as the message";

type Case = readonly [title: string, Conversation, kind: string, sender: string, Expected];

function cases(kit: SystemEventKit): Case[] {
  return kit.conversations.flatMap((conversation) =>
    Object.entries(conversation.events).flatMap(([kind, event]): Case[] => {
      if (typeof event !== "function")
        return [
          [
            `${kind} in ${conversation.name} (no user: as from "${event.sender}")`,
            conversation,
            kind,
            event.sender,
            "as the message",
          ],
        ];
      return (["allowed", "refused"] as const).flatMap((who): Case[] => {
        const sender = conversation[who];
        return sender === undefined
          ? []
          : [
              [
                `${kind} in ${conversation.name} from the ${who} sender`,
                conversation,
                kind,
                sender,
                who,
              ],
            ];
      });
    }),
  );
}

async function heldToTheMessage(
  kit: SystemEventKit,
  conversation: Conversation,
  kind: string,
  sender: string,
  expected: Expected,
): Promise<void> {
  const message = await parseDelivery(kit.channel, await conversation.message(sender));
  const messageEnvelope = message.envelopes[0];
  const messageJudged = messageEnvelope
    ? await judge(messageEnvelope)
    : { admitted: false, why: `dropped by the parser: ${message.dropped.join("; ")}` };
  expect(message.envelopes.length).toBeLessThanOrEqual(1);
  if (messageEnvelope) expect(messageEnvelope.kind).toBe("message");
  // The table itself: the config admits the allowed sender's message and refuses the other's.
  if (expected !== "as the message")
    expect(messageJudged.admitted, `message: ${messageJudged.why}`).toBe(expected === "allowed");

  const event = conversation.events[kind]!;
  const delivery = typeof event === "function" ? await event(sender) : await event.build();
  const parsed = await parseDelivery(kit.channel, delivery);
  if (parsed.envelopes.length === 0) {
    // Dropped by the parser itself (a gate the channel applies before access, as it does to the
    // message): only an event whose message is refused may go that way; then nothing is stored.
    expect(
      messageJudged.admitted,
      `the ${kind} of an admitted sender was dropped: ${parsed.dropped.join("; ")}`,
    ).toBe(false);
    const res = await deliver(delivery);
    expect(res.status, await res.clone().text()).toBe(200);
    return;
  }
  expect(parsed.envelopes).toHaveLength(1);
  const envelope = parsed.envelopes[0]!;
  expect(envelope.kind).toBe("system");
  const eventJudged = await judge(envelope);
  expect(eventJudged.admitted, `event: ${eventJudged.why}; message: ${messageJudged.why}`).toBe(
    messageJudged.admitted,
  );
  // A message the parser dropped has no facts to compare; one that parsed is where the event belongs.
  if (messageEnvelope) {
    expect(routingFacts(envelope)).toEqual(routingFacts(messageEnvelope));
    expect(eventJudged.sessionKey).toBe(messageJudged.sessionKey);
  }

  if (eventJudged.sessionKey) await clearQueued(eventJudged.sessionKey);
  const res = await deliver(delivery);
  expect(res.status, await res.clone().text()).toBe(200);
  if (!eventJudged.sessionKey) return;
  const view = await waitFor(async () => {
    const seen = await sessionView(eventJudged.sessionKey!, envelope.dedupKey);
    return seen.row?.state === "settled" ? seen : undefined;
  });
  expect(view.row!.runId, "a system event never starts a run").toBeNull();
  expect(view.row!.reply, "a system event is never answered").toBeNull();
  if (messageJudged.admitted) expect(view.queued).toContain(envelope.text);
  else expect(view.queued).not.toContain(envelope.text);
}

describe("every channel in the registry has a system-event kit", () => {
  it("or is named, with the reason, as parsing none", () => {
    const covered = new Set([
      ...SYSTEM_KITS.map((kit) => kit.channel),
      ...Object.keys(NO_SYSTEM_EVENTS),
    ]);
    const missing = channelDefinitions()
      .map((definition) => definition.id)
      .filter((id) => !covered.has(id));
    expect(missing).toEqual([]);
    for (const reason of Object.values(NO_SYSTEM_EVENTS)) expect(reason.length).toBeGreaterThan(20);
  });

  it.each(SYSTEM_KITS.map((kit) => [kit.channel, kit] as const))(
    "%s: every kind it parses is exercised from an allowed and a refused sender",
    (_name, kit) => {
      for (const kind of kit.kinds) {
        const places = kit.conversations.filter((conversation) => conversation.events[kind]);
        expect(places.length, `${kind} appears in no conversation`).toBeGreaterThan(0);
        // A senderless kind has no sender to vary; every other one is tried from both sides.
        if (places.every((place) => typeof place.events[kind] === "function")) {
          expect(
            places.some((place) => place.allowed),
            `${kind}: no allowed sender`,
          ).toBe(true);
          expect(
            places.some((place) => place.refused),
            `${kind}: no refused sender`,
          ).toBe(true);
        }
      }
      for (const conversation of kit.conversations) {
        for (const kind of [
          ...Object.keys(conversation.events),
          ...Object.keys(conversation.exceptions ?? {}),
        ])
          expect(kit.kinds, `${conversation.name} names an unlisted kind`).toContain(kind);
        for (const reason of Object.values(conversation.exceptions ?? {}))
          expect(reason.length).toBeGreaterThan(40);
      }
    },
  );
});

describe.each(SYSTEM_KITS.map((kit) => [kit.channel, kit] as const))(
  "%s system events get the message's decision",
  (_name, kit) => {
    it.each(cases(kit))("%s", async (_title, conversation, kind, sender, expected) => {
      await heldToTheMessage(kit, conversation, kind, sender, expected);
    });
  },
);
