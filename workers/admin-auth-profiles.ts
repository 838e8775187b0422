import { Hono } from "hono";
import * as z from "zod";
import { authProfilesView } from "../functions/agent/auth-profiles/view.ts";
import { configFromEnv } from "../functions/channels/gateway-config.ts";
import { auditAdminChange } from "./admin-audit-write.ts";
import type { Env } from "./env.ts";

/**
 * /admin/auth-profiles (gateway token, checked by workers/admin.ts): the model providers' auth
 * profiles (`auth.profiles`) in the order the next call tries them, each with the Worker secret it
 * reads (its name, and whether it is set — never a value) and its cooldown state from the
 * gateway's AuthProfileStateDO; and the operator's lever, forgetting cooldowns (audited
 * `auth_profile.reset`), for a key that was replaced before its cooldown ran out.
 *
 *   GET  /admin/auth-profiles
 *   POST /admin/auth-profiles/reset   { profiles?: ["anthropic:work", …] }   (`{}`: every profile)
 */
export const adminAuthProfiles = new Hono<{ Bindings: Env }>();

const stateOf = (env: Env) => env.AUTH_PROFILES.get(env.AUTH_PROFILES.idFromName("global"));
const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());

adminAuthProfiles.get("/", async (c) => {
  const config = configFromEnv(c.env);
  const usage = await stateOf(c.env).list();
  const view = authProfilesView(config, c.env, usage, Date.now());
  return c.json({
    providers: view.providers.map((provider) => ({
      ...provider,
      profiles: provider.profiles.map((profile) => ({
        ...profile,
        until: iso(profile.until),
        lastUsed: iso(profile.lastUsed),
        lastGood: iso(profile.lastGood),
      })),
    })),
    ignored: view.ignored,
  });
});

function fail(status: 400 | 404, code: string, message: string): Response {
  return Response.json({ error: { message, type: "admin_error", code } }, { status });
}

const resetSchema = z
  .object({ profiles: z.array(z.string().min(1).max(200)).min(1).max(64).optional() })
  .strict();

adminAuthProfiles.post("/reset", async (c) => {
  let raw: unknown;
  try {
    raw = await c.req.json();
  } catch {
    return fail(
      400,
      "invalid_body",
      'body must be JSON: {} for every profile, or { "profiles": [...] }',
    );
  }
  const body = resetSchema.safeParse(raw);
  if (!body.success)
    return fail(
      400,
      "invalid_body",
      body.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`).join("; "),
    );
  const known = Object.keys(configFromEnv(c.env).auth.profiles);
  const unknown = body.data.profiles?.filter((id) => !known.includes(id)) ?? [];
  if (unknown.length)
    return fail(404, "unknown_profile", `not in auth.profiles: ${unknown.join(", ")}`);
  const reset = await stateOf(c.env).reset(body.data.profiles);
  await auditAdminChange(c, {
    action: "auth_profile.reset",
    target: body.data.profiles?.join(",") ?? "all",
    detail: { profiles: body.data.profiles ?? "all", reset },
  });
  return c.json({ ok: true, reset });
});
