import * as z from "zod";
import type { CommandSpec } from "./command-spec.ts";
import { adminRequest } from "./http.ts";
import { renderTable } from "./table.ts";

/** `edgeclaw approvals list|revoke` over /admin/exec-approvals: commands allowed always by /approve. */

const entry = z.object({
  id: z.string(),
  agentId: z.string(),
  segment: z.string(),
  executable: z.string(),
  approvedBy: z.string().nullable(),
  createdAt: z.string(),
  lastUsedAt: z.string().nullable(),
});

export const APPROVAL_COMMANDS: CommandSpec[] = [
  {
    name: "approvals list",
    args: [],
    options: { agent: "id" },
    summary: "commands /approve … allow-always lets run without asking, per agent",
    async run({ options, connection, print }) {
      const agent = typeof options.agent === "string" ? options.agent : undefined;
      const json = await adminRequest(
        connection(),
        "GET",
        `/exec-approvals${agent ? `?agent=${encodeURIComponent(agent)}` : ""}`,
      );
      const data = z.object({ entries: z.array(entry) }).parse(json);
      print(json, () =>
        data.entries.length
          ? renderTable(
              ["ID", "AGENT", "COMMAND", "APPROVED BY", "SINCE", "LAST USED"],
              data.entries.map((e) => [
                e.id,
                e.agentId,
                e.segment,
                e.approvedBy,
                e.createdAt,
                e.lastUsedAt ?? "never",
              ]),
            )
          : "No always-allowed commands.",
      );
      return 0;
    },
  },
  {
    name: "approvals revoke",
    args: ["id"],
    options: {},
    summary: "forget one always-allowed command: it asks for approval again",
    async run({ args: [id], connection, print }) {
      const json = await adminRequest(
        connection(),
        "DELETE",
        `/exec-approvals/${encodeURIComponent(id!)}`,
      );
      const data = z.object({ revoked: entry }).parse(json);
      print(
        json,
        () => `Revoked: \`${data.revoked.segment}\` (agent ${data.revoked.agentId}) asks again.`,
      );
      return 0;
    },
  },
];
