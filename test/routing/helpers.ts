import {
  inboundEnvelopeSchema,
  type InboundEnvelope,
  type InboundEnvelopeInput,
} from "../../functions/core/envelope.ts";

let counter = 0;

/** A valid envelope with overridable fields (a DM from U1 on slack unless told otherwise). */
export function envelope(overrides: Partial<InboundEnvelopeInput> = {}): InboundEnvelope {
  counter += 1;
  const channel = overrides.channel ?? "slack";
  const peerId = overrides.peerId ?? overrides.senderId ?? "U1";
  return inboundEnvelopeSchema.parse({
    dedupKey: `test:${counter}`,
    channel,
    chatType: "direct",
    peerId,
    senderId: "U1",
    text: "hello",
    receivedAt: 1_700_000_000_000,
    route: { channel, to: peerId },
    ...overrides,
  });
}

/** A channel id no other test uses, so tests sharing one Postgres never see each other's rows. */
export function uniqueChannel(prefix = "t"): string {
  return `${prefix}${crypto.randomUUID().replace(/-/g, "").slice(0, 12)}`;
}
