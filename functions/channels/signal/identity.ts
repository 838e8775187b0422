/**
 * The id a Signal sender goes by in allowlists, pairing and sessions: the E.164 number, else
 * `uuid:<uuid>` for a sender whose number is hidden. The companion keys its outbox with it too, so
 * it lives apart from the parser and loads nothing.
 */
export function senderOf(envelope: {
  sourceNumber?: string | null;
  sourceUuid?: string | null;
}): string | undefined {
  if (envelope.sourceNumber) return envelope.sourceNumber;
  return envelope.sourceUuid ? `uuid:${envelope.sourceUuid}` : undefined;
}
