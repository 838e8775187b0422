import * as z from "zod";
import { mattermostApi, type MattermostBot, type MattermostCall } from "./api.ts";
import type { MattermostCommandRecord } from "./command-registry.ts";

/**
 * Registers OpenClaw's `oc_*` slash commands on every team the bot belongs to (REST v4 /commands),
 * pointed at the Worker's callback URL. Mattermost answers each created command with the token it
 * will send in every callback; those tokens are what callbacks are verified against
 * (command-callback.ts), so the caller stores the returned records durably.
 *
 * Per team and trigger: a command with the same trigger made by another integration (another
 * creator) is left alone and reported as skipped; ours is kept, or updated in place when the
 * callback URL changed (its token stays the same); a missing one is created. Runs on the operator's
 * request (admin API / `npx edgeclaw channels mattermost register-commands`), never on a message path.
 */

export const NATIVE_TRIGGER_PREFIX = "oc_";

/** One command to offer: `trigger` without the slash (oc_status), what autocomplete shows. */
export interface NativeCommandSpec {
  trigger: string;
  description: string;
  hint: string;
}

export interface RegistrationReport {
  botUserId: string;
  records: MattermostCommandRecord[];
  /** What happened per team and trigger (no tokens). */
  results: Array<{
    teamId: string;
    trigger: string;
    outcome: "created" | "updated" | "unchanged" | "skipped-foreign";
  }>;
}

const commandSchema = z
  .object({
    id: z.string().min(1),
    token: z.string().optional(),
    creator_id: z.string(),
    team_id: z.string(),
    trigger: z.string(),
    method: z.string().optional(),
    url: z.string().optional(),
    delete_at: z.number().optional(),
  })
  .loose();
type MattermostCommand = z.infer<typeof commandSchema>;

/** Mattermost's most teams per page; a bot in more teams than this is not registered everywhere (said in the report). */
const MAX_TEAMS = 200;

export class RegistrationError extends Error {}

export async function registerNativeCommands(
  bot: MattermostBot,
  specs: readonly NativeCommandSpec[],
  callbackUrl: string,
): Promise<RegistrationReport> {
  const me = await call(mattermostApi<{ id?: unknown }>(bot, "GET", "/users/me"), "GET /users/me");
  if (typeof me.id !== "string" || !me.id)
    throw new RegistrationError("GET /users/me answered without the bot's id");
  const botUserId = me.id;
  const teams = z
    .array(z.object({ id: z.string().min(1) }).loose())
    .parse(
      await call(
        mattermostApi(bot, "GET", `/users/me/teams?per_page=${MAX_TEAMS}`),
        "GET /users/me/teams",
      ),
    );
  const records: MattermostCommandRecord[] = [];
  const results: RegistrationReport["results"] = [];
  const registeredAt = Date.now();

  for (const team of teams) {
    const listed = z
      .array(commandSchema)
      .parse(
        await call(
          mattermostApi(
            bot,
            "GET",
            `/commands?team_id=${encodeURIComponent(team.id)}&custom_only=true`,
          ),
          `GET /commands (team ${team.id})`,
        ),
      );
    const existing = listed.filter((command) => !command.delete_at);
    for (const spec of specs) {
      const sameTrigger = existing.filter((command) => command.trigger === spec.trigger);
      const ours = sameTrigger.find((command) => command.creator_id === botUserId);
      if (!ours && sameTrigger.length) {
        results.push({ teamId: team.id, trigger: spec.trigger, outcome: "skipped-foreign" });
        continue;
      }
      const body = commandBody(team.id, spec, callbackUrl);
      let saved: MattermostCommand;
      let outcome: RegistrationReport["results"][number]["outcome"];
      if (!ours) {
        saved = commandSchema.parse(
          await call(
            mattermostApi(bot, "POST", "/commands", body),
            `POST /commands ${spec.trigger} (team ${team.id})`,
          ),
        );
        outcome = "created";
      } else if (ours.url !== callbackUrl || ours.method !== "P") {
        saved = commandSchema.parse(
          await call(
            mattermostApi(bot, "PUT", `/commands/${encodeURIComponent(ours.id)}`, {
              ...ours,
              ...body,
              id: ours.id,
            }),
            `PUT /commands ${spec.trigger} (team ${team.id})`,
          ),
        );
        outcome = "updated";
      } else {
        saved = ours;
        outcome = "unchanged";
      }
      const token = saved.token || ours?.token || (await regeneratedToken(bot, saved.id));
      records.push({
        teamId: team.id,
        trigger: spec.trigger,
        commandId: saved.id,
        token,
        callbackUrl,
        botUserId,
        registeredAt,
      });
      results.push({ teamId: team.id, trigger: spec.trigger, outcome });
    }
  }
  return { botUserId, records, results };
}

function commandBody(teamId: string, spec: NativeCommandSpec, callbackUrl: string) {
  return {
    team_id: teamId,
    trigger: spec.trigger,
    method: "P",
    url: callbackUrl,
    display_name: `OpenClaw ${spec.trigger.slice(NATIVE_TRIGGER_PREFIX.length)}`,
    description: spec.description.slice(0, 128),
    auto_complete: true,
    auto_complete_desc: spec.description.slice(0, 128),
    auto_complete_hint: spec.hint.slice(0, 128),
  };
}

/** A listed command whose token Mattermost did not show (older servers sanitize it): a new one is issued. */
async function regeneratedToken(bot: MattermostBot, commandId: string): Promise<string> {
  const answer = await call(
    mattermostApi<{ token?: unknown }>(
      bot,
      "PUT",
      `/commands/${encodeURIComponent(commandId)}/regen_token`,
    ),
    "PUT /commands/{id}/regen_token",
  );
  if (typeof answer.token !== "string" || !answer.token)
    throw new RegistrationError("regen_token answered without a token");
  return answer.token;
}

async function call<T>(pending: Promise<MattermostCall<T>>, what: string): Promise<T> {
  const result = await pending;
  if (result.ok) return result.value;
  if (result.kind === "lost") throw new RegistrationError(`${what}: ${result.error}`);
  const hint =
    result.status === 403
      ? " (the bot needs the manage_slash_commands permission: System Console → User Management → System Roles, or make it a team admin)"
      : "";
  throw new RegistrationError(`${what}: ${result.message}${hint}`);
}
