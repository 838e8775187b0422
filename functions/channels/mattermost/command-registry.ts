import * as z from "zod";
import {
  CHANNEL_STATE_LIMITS,
  channelState,
  openStateTable,
  stateTable,
} from "../channel-state.ts";

/**
 * Where the Worker keeps the slash commands it registered on Mattermost and the token Mattermost
 * issued for each: table `commands` of the account's channel-state object
 * (functions/channels/channel-state.ts; durable-objects/channel-state.ts), named
 * `mattermost:<accountId>` as the CommandRegistryDO it replaces named it, so commands registered
 * before keep verifying. Callbacks are verified against it on the webhook path, which touches
 * Durable Objects only (never Postgres, never Mattermost).
 */

const commandRecord = z.object({
  teamId: z.string(),
  /** Without the slash: `oc_status`. */
  trigger: z.string(),
  commandId: z.string(),
  /** The token Mattermost sends in every callback of this command (form field `token`). A secret. */
  token: z.string(),
  callbackUrl: z.string(),
  /** The bot account that created the command (replies, typing and thread checks act as it). */
  botUserId: z.string(),
  registeredAt: z.number(),
});

export type MattermostCommandRecord = z.infer<typeof commandRecord>;

/** The key is the one the object's migration from CommandRegistryDO gave the rows it moved. */
const commandsTable = stateTable<MattermostCommandRecord>({
  name: "commands",
  schema: commandRecord,
  key: (record) => commandKey(record.teamId, record.trigger),
});

function commandKey(teamId: string, trigger: string): string {
  return `${teamId}/${trigger}`;
}

export interface CommandRegistry {
  /** The account's whole set, replacing whatever was registered before (commands dropped since stop verifying). */
  replace(records: MattermostCommandRecord[]): Promise<void>;
  find(teamId: string, trigger: string): Promise<MattermostCommandRecord | null>;
  /** Without tokens, by team then trigger. */
  list(): Promise<Array<Omit<MattermostCommandRecord, "token">>>;
}

/** The registry of one Mattermost account, or undefined when the Worker has no CHANNEL_STATE binding. */
export function mattermostCommandRegistry(
  env: Record<string, unknown>,
  accountId: string,
): CommandRegistry | undefined {
  const store = channelState(env, "mattermost", accountId);
  if (!store) return undefined;
  const table = openStateTable(store, commandsTable);
  return {
    replace: (records) => table.replace(records),
    async find(teamId, trigger) {
      // What a callback names is the caller's: a key the object would refuse finds nothing.
      const key = commandKey(teamId, trigger);
      if (!teamId || !trigger || key.length > CHANNEL_STATE_LIMITS.maxKeyChars) return null;
      const record = await table.get(key);
      return record?.teamId === teamId && record.trigger === trigger ? record : null;
    },
    async list() {
      return (await table.list())
        .sort((a, b) => compare(a.teamId, b.teamId) || compare(a.trigger, b.trigger))
        .map(({ token: _token, ...rest }) => rest);
    },
  };
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
