import { sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import type {
  AccessStore,
  AllowEntry,
  CreatePairingOutcome,
  PairingRequest,
} from "./access-store.ts";

/**
 * AccessStore over the Postgres tables pairing_requests, allow_entries, gateway_state and
 * audit_events. Use inside `withDb(env, (db) => …)`; not for the ack hot path.
 */
const OWNER_KEY = "commands.ownerAllowFrom";
const MAX_CODE_ATTEMPTS = 8;

type Row = Record<string, unknown>;

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function ms(value: unknown): number {
  return value instanceof Date ? value.getTime() : new Date(String(value)).getTime();
}

function toRequest(row: Row): PairingRequest {
  return {
    channel: String(row.channel),
    accountId: String(row.account_id),
    senderId: String(row.sender_id),
    senderName: row.sender_name == null ? undefined : String(row.sender_name),
    code: String(row.code),
    createdAt: ms(row.created_at),
    expiresAt: ms(row.expires_at),
    originKey: row.origin_key == null ? undefined : String(row.origin_key),
  };
}

function toAllowEntry(row: Row): AllowEntry {
  return {
    channel: String(row.channel),
    accountId: String(row.account_id),
    senderId: String(row.sender_id),
    source: String(row.source),
    createdAt: ms(row.created_at),
  };
}

function isUniqueViolation(error: unknown): boolean {
  return (
    typeof error === "object" &&
    error !== null &&
    "code" in error &&
    (error as { code: unknown }).code === "23505"
  );
}

export function postgresAccessStore(db: Db): AccessStore {
  return {
    async isApprovedSender(channel, accountId, senderId) {
      const result = await db.execute(
        sql`select 1 from allow_entries where channel = ${channel} and account_id = ${accountId} and sender_id = ${senderId} limit 1`,
      );
      return result.rows.length > 0;
    },

    async listApprovedSenders(channel, accountId) {
      const result = await db.execute(
        accountId === undefined
          ? sql`select * from allow_entries where channel = ${channel} order by created_at`
          : sql`select * from allow_entries where channel = ${channel} and account_id = ${accountId} order by created_at`,
      );
      return result.rows.map(toAllowEntry);
    },

    async addApprovedSender(entry, now) {
      await db.execute(sql`
        insert into allow_entries (channel, account_id, sender_id, source, created_at)
        values (${entry.channel}, ${entry.accountId}, ${entry.senderId}, ${entry.source}, ${iso(now)}::timestamptz)
        on conflict (channel, account_id, sender_id) do nothing`);
    },

    async removeApprovedSender(channel, accountId, senderId) {
      const result = await db.execute(
        sql`delete from allow_entries where channel = ${channel} and account_id = ${accountId} and sender_id = ${senderId} returning sender_id`,
      );
      return result.rows.length > 0;
    },

    async createPairingRequest(input): Promise<CreatePairingOutcome> {
      const { channel, accountId, senderId, now } = input;
      // Expired requests free their sender, their code and their slot under the cap.
      await db.execute(
        sql`delete from pairing_requests where channel = ${channel} and expires_at <= ${iso(now)}::timestamptz`,
      );
      for (let attempt = 0; attempt < MAX_CODE_ATTEMPTS; attempt++) {
        const code = input.generateCode();
        try {
          // One statement, so duplicate deliveries racing each other mint at most one code.
          const inserted = await db.execute(sql`
            insert into pairing_requests (channel, account_id, sender_id, code, sender_name, created_at, expires_at, origin_key)
            select ${channel}, ${accountId}, ${senderId}, ${code}, ${input.senderName ?? null},
                   ${iso(now)}::timestamptz, ${iso(now + input.ttlMs)}::timestamptz, ${input.originKey ?? null}
            where (select count(*) from pairing_requests where channel = ${channel} and account_id = ${accountId}) < ${input.maxPending}
            on conflict (channel, account_id, sender_id) do nothing
            returning *`);
          const row = inserted.rows[0];
          if (row) return { status: "created", request: toRequest(row) };
          break;
        } catch (error) {
          if (!isUniqueViolation(error)) throw error;
          // Code collision with another pending request: draw again.
        }
      }
      const existing = await db.execute(
        sql`select * from pairing_requests where channel = ${channel} and account_id = ${accountId} and sender_id = ${senderId}`,
      );
      const row = existing.rows[0];
      if (row) return { status: "pending", request: toRequest(row) };
      return { status: "cap-reached" };
    },

    async listPairingRequests(channel, accountId, now) {
      const result = await db.execute(
        accountId === undefined
          ? sql`select * from pairing_requests where channel = ${channel} and expires_at > ${iso(now)}::timestamptz order by created_at`
          : sql`select * from pairing_requests where channel = ${channel} and account_id = ${accountId} and expires_at > ${iso(now)}::timestamptz order by created_at`,
      );
      return result.rows.map(toRequest);
    },

    async takePairingRequest(channel, code, now) {
      const result = await db.execute(sql`
        delete from pairing_requests
        where channel = ${channel} and code = ${code} and expires_at > ${iso(now)}::timestamptz
        returning *`);
      const row = result.rows[0];
      return row ? toRequest(row) : undefined;
    },

    async ownerEntries() {
      const result = await db.execute(
        sql`select value from gateway_state where key = ${OWNER_KEY}`,
      );
      const value = result.rows[0]?.value;
      return Array.isArray(value)
        ? value.filter((entry): entry is string => typeof entry === "string")
        : [];
    },

    async setOwnerIfUnset(entry, now) {
      const result = await db.execute(sql`
        insert into gateway_state (key, value, updated_at)
        values (${OWNER_KEY}, ${JSON.stringify([entry])}::jsonb, ${iso(now)}::timestamptz)
        on conflict (key) do nothing
        returning key`);
      return result.rows.length > 0;
    },

    async getState(key) {
      const result = await db.execute(sql`select value from gateway_state where key = ${key}`);
      return result.rows[0]?.value;
    },

    async setState(key, value, now) {
      await db.execute(sql`
        insert into gateway_state (key, value, updated_at)
        values (${key}, ${JSON.stringify(value)}::jsonb, ${iso(now)}::timestamptz)
        on conflict (key) do update set value = excluded.value, updated_at = excluded.updated_at`);
    },

    async audit(event) {
      await db.execute(sql`
        insert into audit_events (kind, actor, detail, created_at)
        values (${event.kind}, ${event.actor ?? null}, ${JSON.stringify(event.detail ?? {})}::jsonb, ${iso(event.at)}::timestamptz)`);
    },

    async countAuditEvents(kind, actor, sinceMs) {
      const result = await db.execute(sql`
        select count(*)::int as n from audit_events
        where kind = ${kind} and actor = ${actor} and created_at > ${iso(sinceMs)}::timestamptz`);
      return Number(result.rows[0]?.n ?? 0);
    },
  };
}
