import { Hono } from "hono";
import * as z from "zod";
import {
  adminError as fail,
  type ChannelAdminDeps,
  type ChannelAdminEnv,
} from "../channel-admin.ts";
import type { EdgeclawConfig } from "../../config/schema.ts";
import { mattermostBot } from "./api.ts";
import { mattermostCommandRegistry } from "./command-registry.ts";
import type { ChannelDefinition } from "../channel.ts";
import {
  mattermostAccount,
  mattermostNativeCommands,
  type MattermostAccount,
  type MattermostChannelConfig,
} from "./config.ts";
import type { MattermostEndpoint } from "./webhook.ts";
import {
  NATIVE_TRIGGER_PREFIX,
  registerNativeCommands,
  RegistrationError,
  type NativeCommandSpec,
} from "./native-commands.ts";

/**
 * /admin/channels/mattermost (gateway token; mounted by workers/admin.ts from the channel's
 * definition, `admin`): native slash commands.
 *
 *   POST /admin/channels/mattermost/commands { accountId?, callbackUrl? }
 *        registers the `oc_*` commands on every team of the account's bot (native-commands.ts) and
 *        stores what Mattermost issued (command-registry.ts); answers what was created/updated/skipped.
 *   GET  /admin/channels/mattermost/commands?account=   what is registered (never the tokens)
 *
 * The callback URL is the body's, else `commands.callbackUrl`, else this Worker's own origin (as the
 * request reached it) + `commands.callbackPath`.
 *
 * A registration changes what users can run on the platform, so it is audited either way:
 * `mattermost.commands_registered` (target `mattermost:<accountId>`, each team/trigger's outcome) or
 * `mattermost.commands_register_failed` (the reason; commands before the failure may exist). The
 * tokens Mattermost issued and the callback URL's query never enter the trail.
 */
/** OpenClaw's Mattermost set (/oc_status, /oc_model, /oc_new, /oc_help, /oc_think, /oc_verbose, /oc_queue), as far as edgeclaw has the command. */
const OPENCLAW_NATIVE_COMMANDS = [
  "status",
  "model",
  "models",
  "new",
  "help",
  "think",
  "reasoning",
  "verbose",
  "queue",
];

export function mattermostNativeCommandSpecs(
  commands: ChannelAdminDeps["commands"],
): NativeCommandSpec[] {
  return OPENCLAW_NATIVE_COMMANDS.flatMap((name) => {
    const spec = commands.find((command) => command.name === name);
    if (!spec) return [];
    const hint = spec.usage.replace(/^\/\S+\s*/, "");
    return [{ trigger: `${NATIVE_TRIGGER_PREFIX}${name}`, description: spec.description, hint }];
  });
}

const registerSchema = z
  .object({
    accountId: z.string().min(1).max(64).optional(),
    callbackUrl: z.url().max(2000).optional(),
  })
  .strict();

/** The routes, for `channel` (the definition in index.ts, handed in so this file does not import it). */
export function mattermostAdmin(
  deps: ChannelAdminDeps,
  mattermostChannel: ChannelDefinition<
    MattermostChannelConfig,
    MattermostAccount,
    MattermostEndpoint
  >,
): Hono<ChannelAdminEnv> {
  const app = new Hono<ChannelAdminEnv>();
  // `channels.mattermost` as parsed (channel-account.ts rootOf, which this file cannot import: it
  // reads the registry, which loads this channel).
  const rootOf = (config: EdgeclawConfig): MattermostChannelConfig | undefined => {
    const block = config.channels[mattermostChannel.id];
    return typeof block === "object" && block !== null
      ? (block as MattermostChannelConfig)
      : undefined;
  };

  /** Registers the `oc_*` commands on every team of the account's bot and stores their tokens. */
  app.post("/commands", async (c) => {
    const body = registerSchema.safeParse(await c.req.json().catch(() => ({})));
    if (!body.success)
      return fail(c, 400, "invalid_request", body.error.issues[0]?.message ?? "invalid body");
    const config = deps.config(c);
    const root = rootOf(config);
    if (!root) return fail(c, 404, "not_configured", "channels.mattermost is not configured");
    const accountId = body.data.accountId ?? root.defaultAccount ?? "default";
    const account = mattermostAccount(root, accountId);
    if (!mattermostNativeCommands(account))
      return fail(
        c,
        409,
        "native_commands_off",
        `set channels.mattermost.commands.native: true (account ${accountId}) first: the Worker only serves the callback then`,
      );
    const registry = mattermostCommandRegistry(c.env, accountId);
    if (!registry)
      return fail(
        c,
        503,
        "no_registry",
        "the Worker has no CHANNEL_STATE Durable Object binding (wrangler.toml)",
      );
    const bot = mattermostBot({
      env: c.env,
      config,
      account: mattermostChannel.account(root, accountId),
    });
    if ("missing" in bot) return fail(c, 409, "not_configured", bot.missing);
    const callbackUrl =
      body.data.callbackUrl ??
      account.commands.callbackUrl ??
      `${new URL(c.req.url).origin}${account.commands.callbackPath}`;
    const audited = { accountId, callback: urlWithoutQuery(callbackUrl) };
    try {
      const report = await registerNativeCommands(
        bot,
        mattermostNativeCommandSpecs(deps.commands),
        callbackUrl,
      );
      await registry.replace(report.records);
      await deps.audit(c, {
        action: "mattermost.commands_registered",
        target: `mattermost:${accountId}`,
        detail: { ...audited, botUserId: report.botUserId, results: report.results },
      });
      return c.json({
        accountId,
        callbackUrl,
        botUserId: report.botUserId,
        results: report.results,
      });
    } catch (error) {
      if (error instanceof RegistrationError || error instanceof z.ZodError) {
        await deps.audit(c, {
          action: "mattermost.commands_register_failed",
          target: `mattermost:${accountId}`,
          detail: { ...audited, reason: error.message.slice(0, 300) },
        });
        return fail(c, 502, "mattermost_refused", `registration failed: ${error.message}`);
      }
      throw error;
    }
  });

  /** What is registered for an account (never the tokens). */
  app.get("/commands", async (c) => {
    const root = rootOf(deps.config(c));
    if (!root) return fail(c, 404, "not_configured", "channels.mattermost is not configured");
    const accountId = c.req.query("account") ?? root.defaultAccount ?? "default";
    const registry = mattermostCommandRegistry(c.env, accountId);
    if (!registry)
      return fail(
        c,
        503,
        "no_registry",
        "the Worker has no CHANNEL_STATE Durable Object binding (wrangler.toml)",
      );
    return c.json({ accountId, commands: await registry.list() });
  });

  return app;
}

/** Where callbacks go, for the audit trail: a query string could carry a credential of the operator's. */
function urlWithoutQuery(url: string): string {
  const parsed = new URL(url);
  return `${parsed.origin}${parsed.pathname}`;
}
