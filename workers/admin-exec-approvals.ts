import { Hono } from "hono";
import * as z from "zod";
import { listTrusted, revokeTrusted } from "../functions/sandbox/trusted-commands.ts";
import { auditAdminChange } from "./admin-audit-write.ts";
import type { Env } from "./env.ts";
import { requireGatewayToken } from "./gateway-auth.ts";
import { withDb } from "../functions/db/client.ts";
import { sessionsInAudit } from "../functions/control/dead-letter-sessions.ts";
import { clientAddress } from "./client-address.ts";

/**
 * /admin/exec-approvals (gateway token): the commands `/approve <id> allow-always` made durable
 * (functions/sandbox/trusted-commands.ts), and their revocation.
 *
 *   GET    /admin/exec-approvals?agent=<id>   entries, newest first
 *   DELETE /admin/exec-approvals/:id          the entry is gone: its command asks again (audited)
 *   GET    /admin/exec-approvals/pending      commands waiting for approval now, per session
 *   POST   /admin/exec-approvals/pending/decide { sessionKey, id, decision: allow-once | deny }
 *
 * The pending ones live in their SessionDOs; the sessions to ask come from the audit trail
 * (`exec.approval_requested`, written when a command starts waiting). A decision here is the
 * owner's `/approve <id> allow-once|deny`: the command starts (in the background, its end reported
 * to the session) or is refused, and the audit record names the operator's address.
 */
export const adminExecApprovals = new Hono<{ Bindings: Env }>();
adminExecApprovals.use("*", requireGatewayToken);

const agentSchema = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]{0,63}$/i)
  .optional();

adminExecApprovals.get("/", async (c) => {
  const agent = agentSchema.safeParse(c.req.query("agent"));
  if (!agent.success)
    return c.json(
      { error: { message: "agent: not an agent id", type: "admin_error", code: "invalid_query" } },
      400,
    );
  return c.json({ entries: await listTrusted(c.env, agent.data) });
});

adminExecApprovals.get("/pending", async (c) => {
  const keys = await withDb(c.env, (db) =>
    sessionsInAudit(db, ["exec.approval_requested"], { limit: 20 }),
  );
  const sessions = await Promise.all(
    keys.map(async (sessionKey) => {
      try {
        const report = await c.env.SESSIONS.get(c.env.SESSIONS.idFromName(sessionKey)).sandbox();
        return {
          sessionKey,
          pending: report.commands
            .filter((command) => command.state === "approval-pending")
            .map(({ id, command, startedAt }) => ({ id, command, requestedAt: startedAt })),
        };
      } catch {
        return { sessionKey, pending: [] };
      }
    }),
  );
  return c.json({ sessions: sessions.filter((session) => session.pending.length) });
});

const decideSchema = z
  .object({
    sessionKey: z.string().min(1).max(512),
    id: z.string().min(1).max(200),
    decision: z.enum(["allow-once", "deny"]),
  })
  .strict();

adminExecApprovals.post("/pending/decide", async (c) => {
  const body = decideSchema.safeParse(await c.req.json().catch(() => undefined));
  if (!body.success)
    return c.json(
      {
        error: {
          message: body.error.issues
            .map((i) => `${i.path.join(".") || "body"}: ${i.message}`)
            .join("; "),
          type: "admin_error",
          code: "invalid_body",
        },
      },
      400,
    );
  const { sessionKey, id, decision } = body.data;
  const reply = await c.env.SESSIONS.get(c.env.SESSIONS.idFromName(sessionKey)).decideExec(
    id,
    decision,
    `operator:${clientAddress(c.req.raw)}`,
  );
  // The session's answer says whether anything waited under that id.
  const decided = !reply.startsWith("No command waits");
  return c.json(
    decided
      ? { ok: true, sessionKey, id, decision, reply }
      : { error: { message: reply, type: "admin_error", code: "not_pending" } },
    decided ? 200 : 404,
  );
});

adminExecApprovals.delete("/:id", async (c) => {
  const id = c.req.param("id");
  const removed = await revokeTrusted(c.env, id);
  if (!removed)
    return c.json(
      { error: { message: `no exec approval "${id}"`, type: "admin_error", code: "not_found" } },
      404,
    );
  await auditAdminChange(c, {
    action: "exec.approval_revoked",
    target: removed.agentId,
    detail: { id: removed.id, executable: removed.executable },
  });
  return c.json({ revoked: removed });
});
