import { Hono } from "hono";
import { inArray, sql } from "drizzle-orm";
import { withDb } from "../functions/db/client.ts";
import { modelCalls } from "../functions/db/schema.ts";
import { describeError } from "../functions/core/describe-error.ts";
import type { Env } from "./env.ts";

/**
 * /admin/sessions/:key/subagents (gateway token): the sub-agents a session spawned, as the control
 * page shows them under the session — each child's session key, label / task name, state and
 * outcome, start, end and run time, tokens, and cost. The list comes from the parent's
 * SessionDO (running children and ended ones for agents.defaults.subagents.archiveAfterMinutes);
 * the cost is the children's metered model calls in Postgres (what the sessions' mirror has copied
 * so far: a running child's spend can trail by a mirror pass). Postgres unreachable: the list
 * still comes, with `costUsd` absent and `costError` saying why.
 */
// Mounted under /admin/sessions beside admin.ts's own routes: its requireGatewayToken guards it.
export const adminSubagents = new Hono<{ Bindings: Env }>();

const TASK_CHARS = 300;

/** The session's sub-agents: state, label, run time, tokens and cost (Postgres' metered calls). */
adminSubagents.get("/:key/subagents", async (c) => {
  const key = c.req.param("key");
  if (key.length > 512)
    return c.json(
      {
        error: {
          message: "session key: at most 512 characters",
          type: "admin_error",
          code: "invalid_key",
        },
      },
      400,
    );
  const children = await c.env.SESSIONS.get(c.env.SESSIONS.idFromName(key)).subagents();
  const keys = children.map((child) => child.childSessionKey);
  let costs = new Map<string, number>();
  let costError: string | undefined;
  if (keys.length)
    try {
      costs = await withDb(c.env, async (db) => {
        const rows = await db
          .select({
            sessionKey: modelCalls.sessionKey,
            costUsd: sql<number>`coalesce(sum(${modelCalls.costUsd}), 0)`.mapWith(Number),
          })
          .from(modelCalls)
          .where(inArray(modelCalls.sessionKey, keys))
          .groupBy(modelCalls.sessionKey);
        return new Map(rows.map((row) => [row.sessionKey, row.costUsd]));
      });
    } catch (error) {
      costError = describeError(error);
    }
  const now = Date.now();
  return c.json({
    sessionKey: key,
    subagents: children.map((child) => ({
      ...child,
      task: child.task.length > TASK_CHARS ? `${child.task.slice(0, TASK_CHARS)}…` : child.task,
      // A running child's run time so far; an ended one's from its report.
      runtimeMs:
        child.runtimeMs ??
        (child.state === "ended" ? undefined : Math.max(0, now - Date.parse(child.startedAt))),
      ...(costError ? {} : { costUsd: costs.get(child.childSessionKey) ?? 0 }),
    })),
    ...(costError ? { costError } : {}),
  });
});
