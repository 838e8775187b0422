import type { Context } from "hono";
import type { z } from "zod";
import type { Env } from "./env.ts";

/**
 * What the admin API's route files share: the context type, the JSON error every route answers
 * with (`{ error: { message, type: "admin_error", code } }`), who is calling, and a JSON body read
 * against a schema.
 */
export type AdminContext = Context<{ Bindings: Env }>;

export function fail(
  c: AdminContext,
  status: 400 | 404 | 409 | 429 | 500 | 502 | 503,
  code: string,
  message: string,
  headers?: Record<string, string>,
) {
  return c.json({ error: { message, type: "admin_error", code } }, status, headers);
}

/** Who is calling, for the approval brute-force guard and the audit trail. */
export function actorOf(c: AdminContext): string {
  return c.req.header("cf-connecting-ip")?.trim() || "unknown";
}

/** The body as JSON, checked by `schema`; the message names each field that is wrong. */
export async function readJson<T>(
  c: AdminContext,
  schema: z.ZodType<T>,
): Promise<{ ok: true; value: T } | { ok: false; message: string }> {
  let body: unknown;
  try {
    body = await c.req.json();
  } catch {
    return { ok: false, message: "body must be JSON" };
  }
  const parsed = schema.safeParse(body);
  if (!parsed.success)
    return {
      ok: false,
      message: parsed.error.issues
        .map((i) => `${i.path.join(".") || "body"}: ${i.message}`)
        .join("; "),
    };
  return { ok: true, value: parsed.data };
}
