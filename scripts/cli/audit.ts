import * as z from "zod";
import type { CommandSpec } from "./command-spec.ts";
import { adminRequest } from "./http.ts";
import { renderTable } from "./table.ts";

/** `edgeclaw audit` over GET /admin/audit: the audit trail, newest first. */

const auditList = z.object({
  entries: z.array(
    z.object({
      id: z.number(),
      action: z.string(),
      actor: z.string().nullable(),
      target: z.string().nullable(),
      detail: z.unknown(),
      at: z.string(),
    }),
  ),
  nextBefore: z.number().nullable(),
});

export const AUDIT_COMMANDS: CommandSpec[] = [
  {
    name: "audit",
    args: [],
    options: { limit: "n", action: "name", before: "id" },
    summary: "the audit trail: approvals, allowlist changes, lockouts, resets, budget overrides",
    async run({ options, connection, print }) {
      const params = new URLSearchParams();
      for (const key of ["limit", "action", "before"] as const)
        if (typeof options[key] === "string") params.set(key, options[key] as string);
      const json = await adminRequest(
        connection(),
        "GET",
        `/audit${params.size ? `?${params}` : ""}`,
      );
      const data = auditList.parse(json);
      print(json, () => {
        const table = renderTable(
          ["ID", "WHEN", "ACTION", "ACTOR", "TARGET", "DETAIL"],
          data.entries.map((e) => [
            String(e.id),
            e.at,
            e.action,
            e.actor,
            e.target,
            JSON.stringify(e.detail).slice(0, 80),
          ]),
        );
        return data.nextBefore ? `${table}\n(more: --before ${data.nextBefore})` : table;
      });
      return 0;
    },
  },
];
