import { Hono } from "hono";
import * as z from "zod";
import { withDb } from "../functions/db/client.ts";
import { listAudit } from "../functions/db/audit.ts";
import type { Env } from "./env.ts";
import { requireGatewayToken } from "./gateway-auth.ts";

/**
 * GET /admin/audit?limit=&action=&before= (gateway token): the audit trail, newest first — pairing
 * approvals and rejections, allowlist changes, failed-auth lockouts, session resets, budget
 * overrides, dead letters. `before` is the smallest id of the previous page.
 */
export const adminAudit = new Hono<{ Bindings: Env }>();
adminAudit.use("*", requireGatewayToken);

const querySchema = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  before: z.coerce.number().int().positive().optional(),
  action: z
    .string()
    .regex(/^[a-z0-9_.:-]{1,64}$/i)
    .optional(),
});

adminAudit.get("/", async (c) => {
  const parsed = querySchema.safeParse(c.req.query());
  if (!parsed.success) {
    const message = parsed.error.issues
      .map((issue) => `${issue.path.join(".")}: ${issue.message}`)
      .join("; ");
    return c.json({ error: { message, type: "admin_error", code: "invalid_query" } }, 400);
  }
  const entries = await withDb(c.env, (db) => listAudit(db, parsed.data));
  return c.json({
    entries,
    nextBefore: entries.length === parsed.data.limit ? entries.at(-1)!.id : null,
  });
});
