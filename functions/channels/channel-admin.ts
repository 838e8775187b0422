import type { Context, Hono } from "hono";
import type { EdgeclawConfig } from "../config/schema.ts";

/**
 * A channel's own admin routes (`admin` on its ChannelDefinition): a Hono app the admin API
 * (workers/admin.ts) mounts at `/admin/channels/<id>` behind the gateway token, one loop over the
 * registry. A channel folder may not import the Worker's surface (workers/) nor the command layer
 * above it, so what its routes need from there is handed in as `ChannelAdminDeps`.
 */
export type ChannelAdminEnv = { Bindings: Record<string, unknown> & { EDGECLAW_CONFIG?: string } };

export type ChannelAdminContext = Context<ChannelAdminEnv>;

export interface ChannelAdminDeps {
  /**
   * One audit row for an operator's change, after it happened (workers/admin-audit-write.ts): the
   * actor is the caller. `detail` holds ids, kinds and counts — never message text or secrets.
   */
  audit(
    c: ChannelAdminContext,
    change: { action: string; target: string; detail: Record<string, unknown> },
  ): Promise<void>;
  /** The config in force for the request (gateway-config.ts configFromEnv, which loads every channel's manifest). */
  config(c: ChannelAdminContext): EdgeclawConfig;
  /** The gateway's chat commands (functions/commands/registry.ts), for a platform's command menu. */
  commands: ReadonlyArray<{ name: string; usage: string; description: string }>;
}

export type ChannelAdminRoutes = (deps: ChannelAdminDeps) => Hono<ChannelAdminEnv>;

/** The admin API's error shape: `{ error: { message, type: "admin_error", code } }`. */
export function adminError(
  c: ChannelAdminContext,
  status: 400 | 404 | 409 | 502 | 503,
  code: string,
  message: string,
) {
  return c.json({ error: { message, type: "admin_error", code } }, status);
}
