import type { AccessStore } from "./access-store.ts";

/**
 * An access store that knows nothing beyond the config: no approved senders, no learned owner, no
 * pending pairing, and it writes nothing (a pairing request is refused as if the cap were reached).
 * With it, decideAccess answers what the configuration alone allows — for when Postgres cannot be
 * asked, and a decision must not let anyone in that the config does not name.
 */
export function configOnlyAccessStore(): AccessStore {
  return {
    isApprovedSender: async () => false,
    listApprovedSenders: async () => [],
    addApprovedSender: async () => undefined,
    removeApprovedSender: async () => false,
    createPairingRequest: async () => ({ status: "cap-reached" }),
    listPairingRequests: async () => [],
    takePairingRequest: async () => undefined,
    ownerEntries: async () => [],
    setOwnerIfUnset: async () => false,
    getState: async () => undefined,
    setState: async () => undefined,
    audit: async () => undefined,
    countAuditEvents: async () => 0,
  };
}
