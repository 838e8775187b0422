import type { ServerResponse } from "node:http";
import { controlBody, json } from "../../../../scripts/simulate/fakes/kit.ts";
import { newSigningKey } from "../../../../scripts/simulate/fakes/signing-keys.ts";
import { signActivityToken } from "./msteams-identity.ts";
import type { MsTeamsFakeState } from "./msteams-state.ts";

/** The fake Microsoft's `/_control/…` endpoints: what tests sign, script, place and read back. */
export async function msTeamsControl(
  state: MsTeamsFakeState,
  url: URL,
  raw: string,
  res: ServerResponse,
) {
  const path = url.pathname;
  const body = controlBody(raw);
  switch (path) {
    case "/_control/sign":
      return json(res, 200, { token: await signActivityToken(state, body) });
    case "/_control/rotate":
      state.botKey = await newSigningKey("bf");
      return json(res, 200, { kid: state.botKey.kid });
    case "/_control/script":
      state.scripts.push({
        api: String(body.api),
        times: Number(body.times ?? 1),
        status: body.status as number | undefined,
        retryAfter: body.retryAfter as number | undefined,
        drop: body.drop === true,
        ...(typeof body.conversation === "string" ? { conversation: body.conversation } : {}),
      });
      return json(res, 200, { ok: true });
    case "/_control/revoke-tokens":
      state.tokens = new Set();
      return json(res, 200, { ok: true });
    case "/_control/activities": {
      const conversation = url.searchParams.get("conversation");
      return json(res, 200, {
        activities: state.activities.filter(
          (a) => !conversation || a.conversation.split(";messageid=")[0] === conversation,
        ),
      });
    }
    case "/_control/file":
      state.files.set(String(body.path), {
        content: body.sizeBytes ? "x".repeat(Number(body.sizeBytes)) : String(body.content ?? ""),
        auth: body.auth === true,
        ...(typeof body.redirect === "string" ? { redirect: body.redirect } : {}),
      });
      return json(res, 200, { ok: true });
    case "/_control/downloads": {
      const only = url.searchParams.get("path");
      return json(res, 200, { downloads: state.downloads.filter((d) => !only || d.path === only) });
    }
    case "/_control/reset":
      state.files = new Map();
      state.downloads = [];
      state.activities = [];
      state.scripts = [];
      state.streams = new Map();
      return json(res, 200, { ok: true });
  }
  return json(res, 404, { error: "unknown control endpoint" });
}
