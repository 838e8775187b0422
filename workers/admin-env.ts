import { Hono, type Context } from "hono";
import * as z from "zod";
import { configFromEnv } from "../functions/channels/gateway-config.ts";
import { loadManifest } from "../functions/compute-env/manifest.ts";
import { describeInstall } from "../functions/compute-env/describe.ts";
import {
  addDiscipline,
  ComputeEnvUnavailable,
  createEnv,
  declineQuestion,
  disciplineList,
  envStatus,
  installPackages,
  operatorDeps,
} from "../functions/compute-env/operator.ts";
import { CondaInputError } from "../functions/compute-env/conda-cli.ts";
import { SandboxError } from "../functions/sandbox/backend.ts";
import { auditAdminChange } from "./admin-audit-write.ts";
import type { Env } from "./env.ts";
import { requireGatewayToken } from "./gateway-auth.ts";

/**
 * /admin/env (gateway token): an agent's computing environment (functions/compute-env/), for
 * `npx edgeclaw env …` and the control page's Environments view. Changes are audited.
 *
 *   GET  /admin/env?agent=<id>                 status: manifest (env-manifest.json), envs, R, questions, installs
 *   GET  /admin/env/packages?agent=&env=       one env's packages (default: the primary)
 *   GET  /admin/env/disciplines?agent=         the disciplines and which are added
 *   POST /admin/env/disciplines                { agent, discipline, withR }   stage 2 into the primary env
 *   POST /admin/env/install                    { agent, packages, env? }      the cascade
 *   POST /admin/env/create                     { agent, name, description, packages?, reason?, questionId? }
 *   POST /admin/env/questions/:id/decline      { agent }
 */
export const adminEnv = new Hono<{ Bindings: Env }>();
adminEnv.use("*", requireGatewayToken);

const agentId = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/i);

function fail(
  c: Context<{ Bindings: Env }>,
  status: 400 | 404 | 409 | 503,
  message: string,
  code: string,
) {
  return c.json({ error: { message, type: "admin_error", code } }, status);
}

function agentOf(c: Context<{ Bindings: Env }>, raw: unknown): string {
  const config = configFromEnv(c.env);
  const parsed = agentId.safeParse(raw ?? config.agents.list.find((a) => a.default)?.id ?? "main");
  if (!parsed.success) throw new CondaInputError("agent: not an agent id");
  return parsed.data;
}

async function guarded(
  c: Context<{ Bindings: Env }>,
  work: () => Promise<Response>,
): Promise<Response> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ComputeEnvUnavailable)
      return fail(c, 404, error.message, "no_compute_env");
    if (error instanceof CondaInputError) return fail(c, 400, error.message, "invalid_request");
    if (error instanceof SandboxError)
      return fail(c, 503, `the sandbox: ${error.message}`, "sandbox_unavailable");
    throw error;
  }
}

function deps(c: Context<{ Bindings: Env }>, agent: string) {
  return operatorDeps(configFromEnv(c.env), c.env as unknown as Record<string, unknown>, agent);
}

adminEnv.get("/", (c) =>
  guarded(c, async () => {
    const agent = agentOf(c, c.req.query("agent"));
    return c.json(await envStatus(deps(c, agent), `admin-${crypto.randomUUID()}`));
  }),
);

adminEnv.get("/packages", (c) =>
  guarded(c, async () => {
    const agent = agentOf(c, c.req.query("agent"));
    const d = deps(c, agent);
    const name = c.req.query("env") ?? d.config.primary;
    const found = (await loadManifest(d.db, agent)).find((e) => e.name === name);
    if (!found) return fail(c, 404, `no registered env "${name}" for agent ${agent}`, "not_found");
    return c.json({ env: found.name, type: found.type, packages: found.packages });
  }),
);

adminEnv.get("/disciplines", (c) =>
  guarded(c, async () => {
    const agent = agentOf(c, c.req.query("agent"));
    const d = deps(c, agent);
    return c.json({ disciplines: disciplineList(d, await loadManifest(d.db, agent)) });
  }),
);

const disciplineBody = z.object({
  agent: z.string().optional(),
  discipline: z.string().min(1),
  withR: z.boolean().optional(),
});
const installBody = z.object({
  agent: z.string().optional(),
  packages: z.array(z.string().min(1)).min(1),
  env: z.string().optional(),
});
const createBody = z.object({
  agent: z.string().optional(),
  name: z.string().min(1),
  description: z.string().min(1),
  packages: z.array(z.string().min(1)).default(["python"]),
  reason: z.string().default("created by the operator"),
  questionId: z.string().optional(),
});

async function body<T extends z.ZodType>(
  c: Context<{ Bindings: Env }>,
  schema: T,
): Promise<z.infer<T>> {
  const parsed = schema.safeParse(await c.req.json().catch(() => undefined));
  if (!parsed.success) throw new CondaInputError(parsed.error.issues[0]?.message ?? "bad body");
  return parsed.data;
}

async function recorded(
  c: Context<{ Bindings: Env }>,
  agent: string,
  row: Awaited<ReturnType<typeof installPackages>>,
) {
  await auditAdminChange(c, {
    action: `compute_env.${row.kind}`,
    target: `${agent}:${row.envName ?? ""}`,
    detail: { id: row.id, packages: row.packages, status: row.status },
  });
  return c.json({ install: row, text: describeInstall(row) });
}

adminEnv.post("/disciplines", (c) =>
  guarded(c, async () => {
    const input = await body(c, disciplineBody);
    const agent = agentOf(c, input.agent);
    const row = await addDiscipline(deps(c, agent), {
      id: `admin-${crypto.randomUUID()}`,
      discipline: input.discipline,
      withR: input.withR ?? false,
      requestedBy: "operator",
    });
    return recorded(c, agent, row);
  }),
);

adminEnv.post("/install", (c) =>
  guarded(c, async () => {
    const input = await body(c, installBody);
    const agent = agentOf(c, input.agent);
    const row = await installPackages(deps(c, agent), {
      id: `admin-${crypto.randomUUID()}`,
      packages: input.packages,
      ...(input.env ? { envName: input.env } : {}),
      requestedBy: "operator",
    });
    return recorded(c, agent, row);
  }),
);

adminEnv.post("/create", (c) =>
  guarded(c, async () => {
    const input = await body(c, createBody);
    const agent = agentOf(c, input.agent);
    const row = await createEnv(deps(c, agent), {
      id: `admin-${crypto.randomUUID()}`,
      name: input.name,
      packages: input.packages,
      description: input.description,
      reason: input.reason,
      ...(input.questionId ? { questionId: input.questionId } : {}),
      requestedBy: "operator",
    });
    return recorded(c, agent, row);
  }),
);

adminEnv.post("/questions/:id/decline", (c) =>
  guarded(c, async () => {
    const input = await body(c, z.object({ agent: z.string().optional() }));
    const agent = agentOf(c, input.agent);
    const ok = await declineQuestion(deps(c, agent), c.req.param("id"));
    return ok
      ? c.json({ declined: c.req.param("id") })
      : fail(c, 404, "no open question with that id", "not_found");
  }),
);
