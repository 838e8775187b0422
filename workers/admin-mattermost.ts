import { Hono, type Context } from "hono";
import { z } from "zod";
import { COMMANDS } from "../functions/commands/registry.ts";
import { mattermostBot } from "../functions/channels/mattermost/api.ts";
import { mattermostCommandRegistry } from "../functions/channels/mattermost/command-registry.ts";
import {
  mattermostAccount,
  mattermostNativeCommands,
} from "../functions/channels/mattermost/config.ts";
import {
  NATIVE_TRIGGER_PREFIX,
  registerNativeCommands,
  RegistrationError,
  type NativeCommandSpec,
} from "../functions/channels/mattermost/native-commands.ts";
import { configFromEnv } from "../functions/channels/gateway-config.ts";
import { contextFor, rootOf } from "../functions/channels/channel-account.ts";
import { mattermostChannel } from "../functions/channels/mattermost/index.ts";
import type { Env } from "./env.ts";
import { requireGatewayToken } from "./gateway-auth.ts";
import { auditAdminChange } from "./admin-audit-write.ts";

/**
 * /admin/channels/mattermost (gateway token): native slash commands.
 *
 *   POST /admin/channels/mattermost/commands { accountId?, callbackUrl? }
 *        registers the `oc_*` commands on every team of the account's bot (native-commands.ts) and
 *        stores what Mattermost issued (the channel-state object); answers what was created/updated/skipped.
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
type MattermostAdminContext = Context<{ Bindings: Env }>;

export const adminMattermost = new Hono<{ Bindings: Env }>();
adminMattermost.use("*", requireGatewayToken);

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

export function mattermostNativeCommandSpecs(): NativeCommandSpec[] {
  return OPENCLAW_NATIVE_COMMANDS.flatMap((name) => {
    const spec = COMMANDS.find((command) => command.name === name);
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

function fail(
  c: MattermostAdminContext,
  status: 400 | 404 | 409 | 502 | 503,
  code: string,
  message: string,
) {
  return c.json({ error: { message, type: "admin_error", code } }, status);
}

adminMattermost.post("/commands", async (c) => {
  const body = registerSchema.safeParse(await c.req.json().catch(() => ({})));
  if (!body.success)
    return fail(c, 400, "invalid_request", body.error.issues[0]?.message ?? "invalid body");
  const config = configFromEnv(c.env);
  const root = rootOf(mattermostChannel, config);
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
  const bot = mattermostBot(contextFor(mattermostChannel, { env: c.env, config }, accountId));
  if ("missing" in bot) return fail(c, 409, "not_configured", bot.missing);
  const callbackUrl =
    body.data.callbackUrl ??
    account.commands.callbackUrl ??
    `${new URL(c.req.url).origin}${account.commands.callbackPath}`;
  const audited = { accountId, callback: urlWithoutQuery(callbackUrl) };
  try {
    const report = await registerNativeCommands(bot, mattermostNativeCommandSpecs(), callbackUrl);
    await registry.replace(report.records);
    await auditAdminChange(c, {
      action: "mattermost.commands_registered",
      target: `mattermost:${accountId}`,
      detail: { ...audited, botUserId: report.botUserId, results: report.results },
    });
    return c.json({ accountId, callbackUrl, botUserId: report.botUserId, results: report.results });
  } catch (error) {
    if (error instanceof RegistrationError || error instanceof z.ZodError) {
      await auditAdminChange(c, {
        action: "mattermost.commands_register_failed",
        target: `mattermost:${accountId}`,
        detail: { ...audited, reason: error.message.slice(0, 300) },
      });
      return fail(c, 502, "mattermost_refused", `registration failed: ${error.message}`);
    }
    throw error;
  }
});

/** Where callbacks go, for the audit trail: a query string could carry a credential of the operator's. */
function urlWithoutQuery(url: string): string {
  const parsed = new URL(url);
  return `${parsed.origin}${parsed.pathname}`;
}

adminMattermost.get("/commands", async (c) => {
  const root = rootOf(mattermostChannel, configFromEnv(c.env));
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
