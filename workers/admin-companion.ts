import { Hono, type Context } from "hono";
import * as z from "zod";
import { configFromEnv } from "../functions/channels/gateway-config.ts";
import { withDb } from "../functions/db/client.ts";
import { recordAudit } from "../functions/db/audit.ts";
import type { Env } from "./env.ts";
import { requireGatewayToken } from "./gateway-auth.ts";
import { companionStub } from "./companion-signed.ts";
import { companionStatusReport } from "./companion-status.ts";

/**
 * /admin/companion (gateway token): the companion containers' keepers (durable-objects/companion-keeper.ts).
 *
 *   GET  /admin/companion/status                      each deployment's last report: lease, connectors (state, last event, last error), container
 *   GET  /admin/companion/container                   each deployment's container state
 *   POST /admin/companion/container/reset { deployment }   close the crash-loop breaker and start it again
 *
 * The reset is the operator's answer to an open breaker once the cause is fixed (a secret set, a
 * platform outage over) without a deploy; it is audited.
 */
type CompanionAdminContext = Context<{ Bindings: Env }>;

export const adminCompanion = new Hono<{ Bindings: Env }>();
adminCompanion.use("*", requireGatewayToken);

const resetSchema = z.object({ deployment: z.string().regex(/^[\w.-]{1,64}$/) }).strict();

function fail(c: CompanionAdminContext, status: 400 | 404, code: string, message: string) {
  return c.json({ error: { message, type: "admin_error", code } }, status);
}

/** Every deployment named by an ingress key: the only companion Durable Objects there are. */
function deployments(env: Env): string[] {
  return [
    ...new Set(configFromEnv(env).companion.ingressKeys.map((key) => key.deployment ?? key.id)),
  ];
}

adminCompanion.get("/status", async (c) => c.json(await companionStatusReport(c.env)));

adminCompanion.get("/container", async (c) => {
  const reports = await Promise.all(
    deployments(c.env).map(async (deployment) => ({
      deployment,
      container: await companionStub(c.env, deployment).containerReport(),
    })),
  );
  return c.json({ deployed: c.env.EDGECLAW_COMPANION_CONTAINER === "1", deployments: reports });
});

adminCompanion.post("/container/reset", async (c) => {
  let raw: unknown;
  try {
    raw = await c.req.json();
  } catch {
    return fail(c, 400, "invalid_body", "body must be JSON");
  }
  const body = resetSchema.safeParse(raw);
  if (!body.success)
    return fail(
      c,
      400,
      "invalid_body",
      body.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`).join("; "),
    );
  const { deployment } = body.data;
  if (!deployments(c.env).includes(deployment))
    return fail(
      c,
      404,
      "unknown_deployment",
      `no companion.ingressKeys entry belongs to deployment "${deployment}"`,
    );
  const container = await companionStub(c.env, deployment).resetContainer();
  const actor = c.req.header("cf-connecting-ip")?.trim() || "unknown";
  await withDb(c.env, (db) =>
    recordAudit(db, {
      action: "companion.container_reset",
      actor,
      target: deployment,
      detail: { deployment, state: container.state },
    }),
  );
  return c.json({ ok: true, deployment, container });
});
