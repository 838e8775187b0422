import { Hono, type Context } from "hono";
import * as z from "zod";
import { configFromEnv } from "../functions/channels/gateway-config.ts";
import { memoryIndexStatus } from "../functions/agent/memory/indexer.ts";
import {
  ensureIndexFresh,
  MemoryIndexError,
  syncNow,
} from "../functions/agent/memory/index-signal.ts";
import { searchMemory } from "../functions/agent/memory/search.ts";
import { defaultAgentId, knownAgentIds } from "../functions/routing/agents.ts";
import type { Env } from "./env.ts";
import { requireGatewayToken } from "./gateway-auth.ts";

/**
 * /admin/memory (behind the gateway token, mounted by admin.ts): the index's state, a search as
 * the owner sees it (private memory included: the gateway token is the operator), and a reindex,
 * forced or not. `npx edgeclaw memory status|search|index` calls these.
 */
type MemoryContext = Context<{ Bindings: Env }>;

export const adminMemory = new Hono<{ Bindings: Env }>();
adminMemory.use("*", requireGatewayToken);

function fail(c: MemoryContext, status: 400 | 404 | 503, code: string, message: string) {
  return c.json({ error: { message, type: "admin_error", code } }, status);
}

function agentOf(
  c: MemoryContext,
  requested: string | undefined,
): { ok: true; agentId: string } | { ok: false; response: Response } {
  const config = configFromEnv(c.env);
  const agentId = requested?.trim() || defaultAgentId(config);
  if (!knownAgentIds(config).has(agentId))
    return {
      ok: false,
      response: fail(c, 404, "unknown_agent", `no agent "${agentId}" in the config`),
    };
  return { ok: true, agentId };
}

adminMemory.get("/status", async (c) => {
  const agent = agentOf(c, c.req.query("agent"));
  if (!agent.ok) return agent.response;
  return c.json({
    agentId: agent.agentId,
    ...(await memoryIndexStatus(c.env, configFromEnv(c.env), agent.agentId)),
  });
});

const searchBody = z.object({
  query: z.string().trim().min(1).max(2000),
  agent: z.string().optional(),
  maxResults: z.number().int().min(1).max(50).optional(),
  minScore: z.number().min(0).max(1).optional(),
});

adminMemory.post("/search", async (c) => {
  const body = searchBody.safeParse(await c.req.json().catch(() => undefined));
  if (!body.success)
    return fail(
      c,
      400,
      "invalid_body",
      body.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`).join("; "),
    );
  const agent = agentOf(c, body.data.agent);
  if (!agent.ok) return agent.response;
  const config = configFromEnv(c.env);
  try {
    await ensureIndexFresh(c.env, config, agent.agentId);
  } catch (error) {
    if (error instanceof MemoryIndexError && error.embeddings)
      return fail(
        c,
        503,
        "memory_unavailable",
        `memory unavailable: the index could not be updated (${error.message})`,
      );
    throw error;
  }
  const outcome = await searchMemory(c.env, config, agent.agentId, body.data.query, {
    maxResults: body.data.maxResults,
    minScore: body.data.minScore,
    includePrivate: true,
  });
  if (outcome.status === "unavailable") return fail(c, 503, "memory_unavailable", outcome.reason);
  return c.json({ agentId: agent.agentId, ...outcome });
});

const indexBody = z.object({ agent: z.string().optional(), force: z.boolean().default(false) });

adminMemory.post("/index", async (c) => {
  const body = indexBody.safeParse(await c.req.json().catch(() => ({})));
  if (!body.success)
    return fail(
      c,
      400,
      "invalid_body",
      body.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`).join("; "),
    );
  const agent = agentOf(c, body.data.agent);
  if (!agent.ok) return agent.response;
  try {
    const report = await syncNow(c.env, configFromEnv(c.env), agent.agentId, body.data.force);
    return c.json({ agentId: agent.agentId, force: body.data.force, ...report });
  } catch (error) {
    if (error instanceof MemoryIndexError && error.embeddings)
      return fail(c, 503, "memory_unavailable", `indexing failed: ${error.message}`);
    throw error;
  }
});
