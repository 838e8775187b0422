import * as z from "zod";
import type { CommandSpec } from "./command-spec.ts";
import { adminRequest } from "./http.ts";
import { renderTable } from "./table.ts";

/** `edgeclaw memory status | search <query> | index [--force]` over /admin/memory. */

const status = z.object({
  agentId: z.string(),
  files: z.number(),
  chunks: z.number(),
  embeddedChunks: z.number(),
  provider: z.string(),
  model: z.string().optional(),
  lastIndexedAt: z.string().optional(),
  stale: z.boolean(),
});
const search = z.object({
  agentId: z.string(),
  mode: z.string(),
  note: z.string().optional(),
  results: z.array(
    z.object({
      path: z.string(),
      startLine: z.number(),
      endLine: z.number(),
      score: z.number(),
      snippet: z.string(),
    }),
  ),
});
const indexed = z.object({
  agentId: z.string(),
  files: z.number(),
  indexed: z.number(),
  removed: z.number(),
  chunks: z.number(),
  embedded: z.number(),
  ms: z.number(),
  degraded: z.string().optional(),
});

const oneLine = (text: string, max = 100) => {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

export const MEMORY_COMMANDS: CommandSpec[] = [
  {
    name: "memory status",
    args: [],
    options: { agent: "id" },
    summary: "memory index: files, chunks, embeddings, provider",
    async run({ options, connection, print }) {
      const agent =
        typeof options.agent === "string" ? `?agent=${encodeURIComponent(options.agent)}` : "";
      const json = await adminRequest(connection(), "GET", `/memory/status${agent}`);
      const s = status.parse(json);
      print(json, () =>
        [
          `Agent: ${s.agentId}`,
          `Provider: ${s.provider}${s.model ? ` (model ${s.model})` : ""}`,
          `Indexed: ${s.files} file(s), ${s.chunks} chunk(s), ${s.embeddedChunks} with embeddings`,
          `Last indexed: ${s.lastIndexedAt ?? "never"}${s.stale ? " — behind the workspace (the next search or index catches up)" : ""}`,
        ].join("\n"),
      );
      return 0;
    },
  },
  {
    name: "memory search",
    args: ["query"],
    options: { agent: "id", limit: "n" },
    summary: "search memory as the owner sees it",
    async run({ args: [query], options, connection, print }) {
      const json = await adminRequest(connection(), "POST", "/memory/search", {
        query,
        agent: typeof options.agent === "string" ? options.agent : undefined,
        maxResults: typeof options.limit === "string" ? Number(options.limit) : undefined,
      });
      const r = search.parse(json);
      print(json, () =>
        [
          `mode: ${r.mode}${r.note ? ` (${r.note})` : ""}`,
          r.results.length
            ? renderTable(
                ["SCORE", "WHERE", "SNIPPET"],
                r.results.map((hit) => [
                  hit.score.toFixed(3),
                  `${hit.path}#L${hit.startLine}-L${hit.endLine}`,
                  oneLine(hit.snippet),
                ]),
              )
            : "No matching memory.",
        ].join("\n"),
      );
      return 0;
    },
  },
  {
    name: "memory index",
    args: [],
    options: { agent: "id", force: "flag" },
    summary: "bring the memory index up to date (--force: rebuild every file)",
    async run({ options, connection, print }) {
      const json = await adminRequest(connection(), "POST", "/memory/index", {
        agent: typeof options.agent === "string" ? options.agent : undefined,
        force: options.force === true,
      });
      const r = indexed.parse(json);
      print(
        json,
        () =>
          `Indexed ${r.indexed} of ${r.files} memory file(s) (${r.chunks} chunks, ${r.embedded} embedded), removed ${r.removed}, in ${r.ms} ms.${r.degraded ? ` Keyword-only: ${r.degraded}.` : ""}`,
      );
      return 0;
    },
  },
];
