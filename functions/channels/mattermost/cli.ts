import * as z from "zod";
import type { CommandSpec } from "../../../scripts/cli/command-spec.ts";
import { adminRequest } from "../../../scripts/cli/http.ts";
import { renderTable } from "../../../scripts/cli/table.ts";

/**
 * `edgeclaw channels mattermost register-commands | commands`: native slash commands. Unlike the
 * Telegram set-webhook, the registration runs in the gateway (POST /admin/channels/mattermost/commands):
 * the gateway holds the bot token and must keep the per-command tokens Mattermost issues, so they go
 * from Mattermost straight into its storage and never pass through this terminal.
 */

const registration = z.object({
  accountId: z.string(),
  callbackUrl: z.string(),
  botUserId: z.string(),
  results: z.array(z.object({ teamId: z.string(), trigger: z.string(), outcome: z.string() })),
});
const listing = z.object({
  accountId: z.string(),
  commands: z.array(
    z.object({
      teamId: z.string(),
      trigger: z.string(),
      commandId: z.string(),
      callbackUrl: z.string(),
      registeredAt: z.number(),
    }),
  ),
});

const str = (value: string | boolean | undefined) =>
  typeof value === "string" && value ? value : undefined;

/** This channel's `edgeclaw` commands (scripts/cli/commands.ts finds them here). */
export const commands: CommandSpec[] = [
  {
    name: "channels mattermost register-commands",
    args: [],
    options: { account: "id", "callback-url": "url" },
    summary:
      "register the oc_* slash commands on every team of the bot (commands.native must be true); re-run after the callback URL changes",
    async run({ options, connection, print }) {
      const body = {
        ...(str(options.account) ? { accountId: str(options.account) } : {}),
        ...(str(options["callback-url"]) ? { callbackUrl: str(options["callback-url"]) } : {}),
      };
      const json = await adminRequest(connection(), "POST", "/channels/mattermost/commands", body);
      const data = registration.parse(json);
      const skipped = data.results.filter((r) => r.outcome === "skipped-foreign");
      print(json, () =>
        [
          `Mattermost slash commands for account ${data.accountId} → ${data.callbackUrl}`,
          renderTable(
            ["TEAM", "COMMAND", "OUTCOME"],
            data.results.map((r) => [r.teamId, `/${r.trigger}`, r.outcome]),
          ),
          ...(skipped.length
            ? [
                "",
                `${skipped.length} left alone: another integration owns that trigger on that team.`,
              ]
            : []),
          ...(/^http:\/\/(localhost|127\.)/.test(data.callbackUrl)
            ? [
                "",
                "The callback URL is loopback: Mattermost reaches it only on this host. Pass --callback-url with an address it can reach.",
              ]
            : []),
        ].join("\n"),
      );
      return 0;
    },
  },
  {
    name: "channels mattermost commands",
    args: [],
    options: { account: "id" },
    summary: "the slash commands the gateway registered (no tokens)",
    async run({ options, connection, print }) {
      const account = str(options.account);
      const json = await adminRequest(
        connection(),
        "GET",
        `/channels/mattermost/commands${account ? `?account=${encodeURIComponent(account)}` : ""}`,
      );
      const data = listing.parse(json);
      print(json, () =>
        renderTable(
          ["TEAM", "COMMAND", "CALLBACK", "REGISTERED"],
          data.commands.map((c) => [
            c.teamId,
            `/${c.trigger}`,
            c.callbackUrl,
            new Date(c.registeredAt).toISOString(),
          ]),
        ),
      );
      return 0;
    },
  },
];
