import * as z from "zod";
import type { EdgeclawConfig } from "../../config/schema.ts";
import type { AgentTool } from "../types.ts";
import { ensureIndexFresh, MemoryIndexError } from "../memory/index-signal.ts";
import { searchMemory } from "../memory/search.ts";
import { dbEnvOf, parseToolArgs } from "./common.ts";

const searchArgs = z.object({
  query: z.string().trim().min(1).max(2000),
  maxResults: z.number().int().min(1).max(50).optional(),
  minScore: z.number().min(0).max(1).optional(),
});

/**
 * memory_search: ranked snippets from the agent's memory files (memory/search.ts). Outside the
 * owner's main private session MEMORY.md and memory/ are not searched at all, the same rule that
 * keeps them out of the prompt and the file tools there.
 */
export function createMemorySearchTool(config: EdgeclawConfig): AgentTool | null {
  if (!config.memory.search.enabled) return null;
  return {
    name: "memory_search",
    description:
      "Search your memory files (MEMORY.md, USER.md, memory/*.md notes) for what you wrote down earlier: decisions, preferences, facts, past conversations. Returns ranked snippets with path and line range; read more with memory_get.",
    parameters: {
      type: "object",
      properties: {
        query: { type: "string", description: "What to look for, in words" },
        maxResults: {
          type: "integer",
          minimum: 1,
          maximum: 50,
          description: `Most results to return (default ${config.memory.search.query.maxResults})`,
        },
        minScore: {
          type: "number",
          minimum: 0,
          maximum: 1,
          description: `Lowest hybrid score to keep (default ${config.memory.search.query.minScore})`,
        },
      },
      required: ["query"],
      additionalProperties: false,
    },
    async execute(rawArgs, ctx) {
      const args = parseToolArgs("memory_search", searchArgs, rawArgs);
      const env = { ...ctx.env, ...dbEnvOf(ctx) };
      try {
        await ensureIndexFresh(env, ctx.config, ctx.agentId);
      } catch (error) {
        // An explicit provider that cannot embed the changed files: say so, never rank stale or partial results silently.
        if (error instanceof MemoryIndexError && error.embeddings)
          return {
            content: `memory unavailable: the index could not be updated (${error.message})`,
            isError: true,
          };
        throw error;
      }
      const outcome = await searchMemory(env, ctx.config, ctx.agentId, args.query, {
        maxResults: args.maxResults,
        minScore: args.minScore,
        includePrivate: ctx.mainPrivateSession,
      });
      if (outcome.status === "unavailable") return { content: outcome.reason, isError: true };
      const header = [
        `mode: ${outcome.mode}${outcome.note ? ` (${outcome.note})` : ""}`,
        ctx.mainPrivateSession
          ? undefined
          : "scope: shared files only (MEMORY.md and memory/ are private to the owner's own chat)",
      ].filter(Boolean);
      if (!outcome.results.length)
        return { content: [...header, "No matching memory."].join("\n") };
      const body = outcome.results.map(
        (hit, i) =>
          `${i + 1}. ${hit.path}#L${hit.startLine}-L${hit.endLine} (score ${hit.score.toFixed(3)})\n${hit.snippet}`,
      );
      return { content: [...header, ...body].join("\n\n") };
    },
  };
}
