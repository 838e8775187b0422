import type { IncomingMessage, ServerResponse } from "node:http";
import { fakeServer, json } from "../../../../scripts/simulate/fakes/kit.ts";
import { listenOnLoopback } from "../../../../scripts/simulate/fakes/listen.ts";
import { newSigningKey } from "../../../../scripts/simulate/fakes/signing-keys.ts";
import { ACTIVITIES_PATH, activitiesRoute } from "./msteams-connector.ts";
import { msTeamsControl } from "./msteams-control.ts";
import { identityRoutes, UNHANDLED } from "./msteams-identity.ts";
import { MsTeamsFakeState } from "./msteams-state.ts";

export { FAKE_MSTEAMS_APP } from "./msteams-records.ts";

/**
 * A fake Microsoft on loopback for Teams bots, speaking the Bot Framework's wire formats:
 *   GET  /botframework/v1/.well-known/openidconfiguration   {issuer, jwks_uri}
 *   GET  /botframework/v1/keys                              the Bot Framework signing keys (JWK set)
 *   GET  /login/{tenant}/v2.0/.well-known/openid-configuration, /login/{tenant}/discovery/v2.0/keys   Entra
 *   POST /login/{tenant|botframework.com}/oauth2/v2.0/token  grant_type=client_credentials, client_id,
 *        client_secret, scope=https://api.botframework.com/.default → {token_type, expires_in, access_token}
 *        (wrong secret → 401 {error: "invalid_client"})
 *   POST /v3/conversations/{id}/activities[/{replyToId}]    {type, text, textFormat} → {id}; with a
 *        `streaminfo` entity: Teams' native streaming in personal chats (see streamActivity)
 *   PUT  /v3/conversations/{id}/activities/{activityId}     edit a posted message (counted in `updates`)
 *   DELETE /v3/conversations/{id}/activities/{activityId}
 * Connector calls need `Authorization: Bearer <a token the token endpoint issued>`; revoked → 401.
 *
 * Control endpoints (tests in workerd call these by plain fetch):
 *   POST /_control/sign {audience?, serviceUrl?, noServiceUrl?, issuer?, expiresInSeconds?, forged?, kid?, entraTenant?, tid?} → {token}
 *   POST /_control/rotate      new Bot Framework signing key; the old one is retired
 *   POST /_control/script {api: "send"|"token"|"stream"|"final"|"update"|"delete", times?, status?, retryAfter?,
 *        drop?, conversation?}   drop: do the call, then cut the connection before answering (outcome unknown)
 *   POST /_control/revoke-tokens
 *   GET  /_control/activities?conversation=   posted activities {id, conversation, type, text, at,
 *        streamId?, streamType?, streamSequence?, updates?, deleted?}
 *   POST /_control/file {path, content | sizeBytes, auth?, redirect?}   a file served at GET path (auth: needs a bot token)
 *   GET  /_control/downloads?path=   {path, host, authorization} of every file request
 *   POST /_control/reset
 */

export interface FakeMsTeamsApi {
  url: string;
  stop(): Promise<void>;
}

export async function startFakeMsTeamsApi(): Promise<FakeMsTeamsApi> {
  const state = new MsTeamsFakeState(await newSigningKey("bf"), await newSigningKey("entra"));

  async function handle(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    raw: string,
  ): Promise<unknown> {
    const path = url.pathname;
    if (path.startsWith("/_control/")) return msTeamsControl(state, url, raw, res);
    const identity = identityRoutes(state, req, res, path, raw);
    if (identity !== UNHANDLED) return identity;
    const file = req.method === "GET" ? state.files.get(path) : undefined;
    if (file) {
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
      state.downloads.push({
        path,
        host: String(req.headers.host ?? ""),
        authorization: bearer !== undefined,
      });
      if (file.auth && (!bearer || !state.tokens.has(bearer)))
        return json(res, 401, { message: "Authorization has been denied for this request." });
      if (file.redirect) {
        res.writeHead(302, { location: file.redirect });
        return res.end();
      }
      res.writeHead(200, {
        "content-type": "text/plain; charset=utf-8",
        "content-length": String(Buffer.byteLength(file.content)),
      });
      return res.end(file.content);
    }

    const send = ACTIVITIES_PATH.exec(path);
    if (send && (req.method === "POST" || req.method === "PUT" || req.method === "DELETE"))
      return activitiesRoute(state, req, res, raw, send);
    return json(res, 404, {
      error: { code: "NotFound", message: `no route ${req.method} ${path}` },
    });
  }

  const server = fakeServer(handle);

  const listening = await listenOnLoopback(server);
  state.baseUrl = listening.url;
  return { url: listening.url, stop: listening.stop };
}
