/**
 * What access control remembers between messages: approved senders, pending pairing requests,
 * the owner learned from the first approval, and the audit trail. Postgres implementation in
 * access-store-postgres.ts; decideAccess and the admin API only see this interface.
 */
export interface PairingRequest {
  channel: string;
  accountId: string;
  senderId: string;
  senderName?: string;
  code: string;
  createdAt: number;
  expiresAt: number;
  /** Dedup key of the event that created the request (absent on rows from before it was recorded). */
  originKey?: string;
}

export interface AllowEntry {
  channel: string;
  accountId: string;
  senderId: string;
  /** "pairing" (approved code), "admin" (added through the admin API / CLI). */
  source: string;
  createdAt: number;
}

export type CreatePairingOutcome =
  | { status: "created"; request: PairingRequest }
  /** A request for this sender is still pending: nothing new is minted or sent. */
  | { status: "pending"; request: PairingRequest }
  /** The channel account already has `maxPending` pending requests: the sender is ignored. */
  | { status: "cap-reached" };

export interface CreatePairingInput {
  channel: string;
  accountId: string;
  senderId: string;
  senderName?: string;
  /** Dedup key of the event asking: kept with the request so a retry of that event can re-send its code. */
  originKey?: string;
  now: number;
  ttlMs: number;
  maxPending: number;
  generateCode: () => string;
}

export interface AuditEvent {
  kind: string;
  actor?: string;
  detail?: Record<string, unknown>;
  at: number;
}

export interface AccessStore {
  isApprovedSender(channel: string, accountId: string, senderId: string): Promise<boolean>;
  listApprovedSenders(channel: string, accountId?: string): Promise<AllowEntry[]>;
  addApprovedSender(entry: Omit<AllowEntry, "createdAt">, now: number): Promise<void>;
  removeApprovedSender(channel: string, accountId: string, senderId: string): Promise<boolean>;

  /** Atomic: at most one pending request per sender, at most `maxPending` per channel account. */
  createPairingRequest(input: CreatePairingInput): Promise<CreatePairingOutcome>;
  listPairingRequests(
    channel: string,
    accountId: string | undefined,
    now: number,
  ): Promise<PairingRequest[]>;
  /** Removes and returns the pending (unexpired) request with this code, if any. */
  takePairingRequest(
    channel: string,
    code: string,
    now: number,
  ): Promise<PairingRequest | undefined>;

  /** Owner entries learned at runtime (`<channel>:<senderId>`), on top of `commands.ownerAllowFrom`. */
  ownerEntries(): Promise<string[]>;
  /** Sets the owner if none is stored yet; true when this call set it. */
  setOwnerIfUnset(entry: string, now: number): Promise<boolean>;

  /** Small runtime values (lockouts). */
  getState(key: string): Promise<unknown>;
  setState(key: string, value: unknown, now: number): Promise<void>;

  audit(event: AuditEvent): Promise<void>;
  countAuditEvents(kind: string, actor: string, sinceMs: number): Promise<number>;
}
