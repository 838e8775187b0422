import { DurableObject } from "cloudflare:workers";
import type {
  CommandRegistry,
  MattermostCommandRecord,
} from "../functions/channels/mattermost/command-registry.ts";
import { migrate, type SchemaMigration } from "./lib/migrate.ts";
import type { Env } from "./env.ts";
import type { CommandRegistryRpc } from "./rpc.ts";

/** CommandRegistryDO's tables, versioned by the shared migrator (lib/migrate.ts): append a step to change them. */
const COMMAND_REGISTRY_MIGRATIONS: readonly SchemaMigration[] = [
  {
    version: 1,
    why: "tables of this object (created with IF NOT EXISTS before versioned migrations)",
    statements: [
      `CREATE TABLE IF NOT EXISTS commands (team_id TEXT NOT NULL, trigger TEXT NOT NULL, command_id TEXT NOT NULL, token TEXT NOT NULL, callback_url TEXT NOT NULL, bot_user_id TEXT NOT NULL, registered_at INTEGER NOT NULL, PRIMARY KEY (team_id, trigger))`,
    ],
  },
];

/**
 * The native slash commands one channel account registered on its platform, with the per-command
 * token the platform sends back in every callback (Mattermost's `oc_*` commands, named
 * `mattermost:<accountId>`). Its one job: keep that set, replaced whole by each registration, and
 * answer "which command is this team's trigger" for the callback check. The tokens never leave
 * through `list`.
 */
export class CommandRegistryDO
  extends DurableObject<Env>
  implements CommandRegistry, CommandRegistryRpc
{
  private readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    migrate(ctx.storage, { name: "CommandRegistryDO", migrations: COMMAND_REGISTRY_MIGRATIONS });
  }

  async replace(records: MattermostCommandRecord[]): Promise<void> {
    this.ctx.storage.transactionSync(() => {
      this.sql.exec("DELETE FROM commands");
      for (const r of records) {
        this.sql.exec(
          "INSERT OR REPLACE INTO commands VALUES (?, ?, ?, ?, ?, ?, ?)",
          r.teamId,
          r.trigger,
          r.commandId,
          r.token,
          r.callbackUrl,
          r.botUserId,
          r.registeredAt,
        );
      }
    });
  }

  async find(teamId: string, trigger: string): Promise<MattermostCommandRecord | null> {
    const row = this.sql
      .exec<Row>("SELECT * FROM commands WHERE team_id = ? AND trigger = ?", teamId, trigger)
      .toArray()[0];
    return row ? recordOf(row) : null;
  }

  async list(): Promise<Array<Omit<MattermostCommandRecord, "token">>> {
    return this.sql
      .exec<Row>("SELECT * FROM commands ORDER BY team_id, trigger")
      .toArray()
      .map((row) => {
        const { token: _token, ...rest } = recordOf(row);
        return rest;
      });
  }
}

type Row = {
  team_id: string;
  trigger: string;
  command_id: string;
  token: string;
  callback_url: string;
  bot_user_id: string;
  registered_at: number;
};

function recordOf(row: Row): MattermostCommandRecord {
  return {
    teamId: row.team_id,
    trigger: row.trigger,
    commandId: row.command_id,
    token: row.token,
    callbackUrl: row.callback_url,
    botUserId: row.bot_user_id,
    registeredAt: row.registered_at,
  };
}
