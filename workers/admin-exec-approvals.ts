import { Hono } from "hono";
import { z } from "zod";
import { listTrusted, revokeTrusted } from "../functions/sandbox/trusted-commands.ts";
import { auditAdminChange } from "./admin-audit-write.ts";
import type { Env } from "./env.ts";
import { requireGatewayToken } from "./gateway-auth.ts";

/**
 * /admin/exec-approvals (gateway token): the commands `/approve <id> allow-always` made durable
 * (functions/sandbox/trusted-commands.ts), and their revocation.
 *
 *   GET    /admin/exec-approvals?agent=<id>   entries, newest first
 *   DELETE /admin/exec-approvals/:id          the entry is gone: its command asks again (audited)
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
