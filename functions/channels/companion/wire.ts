import * as z from "zod";

/**
 * The bodies of `/internal/companion/*` (COMPANION.md "Wire"): what the companion sends and what
 * the Worker answers. zod on the Worker side because these bytes come from outside (a signed but
 * possibly buggy or leaked-key sender); the companion validates the answers with its own copy.
 */

const id = z.string().min(1).max(200);

export const socketEventSchema = z.object({
  /** The platform's stable id for the event (keys the companion's outbox row). */
  eventId: id,
  payload: z.unknown(),
  /** Unix ms the companion received it. */
  receivedAt: z.number().int().nonnegative(),
});

export const eventsRequestSchema = z.object({
  channel: id,
  accountId: id,
  events: z.array(socketEventSchema).min(1),
});
export type EventsRequest = z.infer<typeof eventsRequestSchema>;

/**
 * Per event: "stored" = every envelope parse produced is accepted, duplicate or unrouted (or there
 * was none); only then may the companion delete its outbox row. "failed" with `permanent` = the
 * event can never be stored (not the platform's shape); the companion dead-letters it instead of
 * retrying forever.
 */
export type EventResult =
  | {
      eventId: string;
      status: "stored";
      /** What each envelope became (for logs and figures; the companion needs only `status`). */
      outcomes: Array<"accepted" | "duplicate" | "unrouted">;
      /**
       * Where each accepted or duplicate envelope is kept, as a webhook's `x-edgeclaw-event` names
       * it: what became of it is for the gateway token to ask (GET /admin/sessions/:key/events/:dedupKey).
       */
      events: Array<{ sessionKey: string; dedupKey: string }>;
      /** Why the parser or the routing took nothing from (part of) the event. */
      dropped?: string[];
    }
  | { eventId: string; status: "failed"; error: string; permanent?: true };

export const leaseRequestSchema = z.object({
  instanceId: id,
  action: z.enum(["acquire", "renew", "release"]),
});

export const statePutSchema = z.object({
  epoch: z.number().int().positive(),
  channel: id,
  accountId: id,
  key: id,
  value: z.string().nullable(),
});

export const stateQuerySchema = z.object({ channel: id, accountId: id, key: id });

/**
 * Many keys of one account at once, under one epoch: written in one transaction (all or none), so
 * state that must move together (a Baileys key set and the pre-key counter beside it) never lands
 * half. Bounded per request (entries) and per value (`companion.maxStateValueBytes`).
 */
export const STATE_BATCH_MAX_KEYS = 1000;
export const stateBatchPutSchema = z.object({
  epoch: z.number().int().positive(),
  channel: id,
  accountId: id,
  entries: z
    .array(z.object({ key: id, value: z.string().nullable() }))
    .min(1)
    .max(STATE_BATCH_MAX_KEYS),
});

export const stateBatchReadSchema = z.object({
  channel: id,
  accountId: id,
  keys: z.array(id).min(1).max(STATE_BATCH_MAX_KEYS),
});

/**
 * A device link a connector waits for or holds (WhatsApp): its state, the QR code (text and
 * modules, one 0/1 string per row, for the control page and the CLI to draw), a pairing code.
 */
const connectorLinkSchema = z.object({
  state: z.string().min(1).max(40),
  qr: z.string().max(2048).optional(),
  qrModules: z
    .array(
      z
        .string()
        .regex(/^[01]+$/)
        .max(200),
    )
    .max(200)
    .optional(),
  expiresAt: z.number().int().nonnegative().optional(),
  pairingCode: z.string().max(16).optional(),
  me: z.string().max(255).optional(),
  retryAt: z.number().int().nonnegative().optional(),
  reason: z.string().max(500).optional(),
});

export const statusReportSchema = z.object({
  epoch: z.number().int().positive(),
  instanceId: id,
  connectors: z
    .array(
      z.object({
        channel: id,
        accountId: id,
        state: z.string().min(1).max(40),
        lastEventAt: z.number().int().nonnegative().optional(),
        lastError: z.string().max(500).optional(),
        link: connectorLinkSchema.optional(),
      }),
    )
    .max(500),
});
