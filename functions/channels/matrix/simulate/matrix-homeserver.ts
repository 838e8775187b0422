import type { IncomingMessage, ServerResponse } from "node:http";
import { controlBody, fakeServer, json } from "../../../../scripts/simulate/fakes/kit.ts";
import { listenOnLoopback } from "../../../../scripts/simulate/fakes/listen.ts";
import { FAKE_MATRIX_BOT } from "./matrix-identity.ts";
import { FakeMatrixWorld } from "./matrix-world.ts";

/**
 * A fake Matrix homeserver on loopback, speaking the client-server API (v3) for one bot user:
 * - `Authorization: Bearer <token>` (unknown → 401 M_UNKNOWN_TOKEN): GET /account/whoami;
 *   GET /sync?since=&timeout=&filter= (long poll until something is past `since`; with no `since`,
 *   the current state with `filter.room.timeline.limit` events per joined room, default 10);
 *   PUT /rooms/{roomId}/send/{type}/{txnId} (not joined → 403 M_FORBIDDEN; a repeated txnId
 *   answers the event it made, as the spec's idempotency asks); POST /join/{roomIdOrAlias} and
 *   POST /rooms/{roomId}/join (invited or public rooms only); GET /directory/room/{alias};
 *   GET/PUT /user/{userId}/account_data/{type}; PUT /rooms/{roomId}/typing/{userId};
 *   GET /rooms/{roomId}/event/{eventId}.
 * - Control (plain fetch):
 *   POST /_control/room {roomId, alias?, encrypted?, public?, joined?}   a room (joined: the bot is in it)
 *   POST /_control/invite {roomId, inviter, isDirect?}                   an invite for the bot
 *   POST /_control/message {roomId, sender, body?, content?, type?}      a user's event (→ {event_id});
 *        in an encrypted room an m.room.message becomes m.room.encrypted ciphertext
 *   POST /_control/direct {userId, roomId}                               the bot's m.direct lists the room
 *   POST /_control/script {method, path, times?, status?, dropAfter?}    next calls fail (path = prefix);
 *        dropAfter: the call is done, then its connection is cut before the answer (a lost answer)
 *   GET  /_control/sent?room=   the bot's events in a room     GET /_control/syncs   the `since` of every /sync
 *   GET  /_control/joined       the rooms the bot is in         GET /_control/calls?path=
 */

export interface FakeHomeserver {
  url: string;
  world: FakeMatrixWorld;
  stop(): Promise<void>;
}

interface Script {
  method: string;
  path: string;
  times: number;
  status?: number;
  dropAfter?: boolean;
}

const API = "/_matrix/client/v3";

export async function startFakeHomeserver(
  /** The tokens it takes: a list (default the test suite's), or a check (`simulate` takes any). */
  options: { tokens?: string[] | ((token: string) => boolean) } = {},
): Promise<FakeHomeserver> {
  const given = options.tokens ?? ["mx-test-token"];
  const tokenOk = typeof given === "function" ? given : (token: string) => given.includes(token);
  const world = new FakeMatrixWorld();
  const syncs: Array<string | null> = [];
  const calls: Array<{ method: string; path: string; body: unknown }> = [];
  let scripts: Script[] = [];
  let stopping = false;

  const error = (res: ServerResponse, status: number, errcode: string, message: string) =>
    json(res, status, { errcode, error: message });

  async function api(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    body: string,
  ): Promise<unknown> {
    const method = req.method ?? "GET";
    const path = url.pathname.slice(API.length);
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    const token = bearer ?? url.searchParams.get("access_token") ?? "";
    if (!tokenOk(token)) return error(res, 401, "M_UNKNOWN_TOKEN", "Unrecognised access token");
    const parsed = body ? (JSON.parse(body) as Record<string, unknown>) : {};
    calls.push({ method, path, body: parsed });
    const script = scripts.find((s) => s.method === method && path.startsWith(s.path));
    if (script) {
      script.times -= 1;
      scripts = scripts.filter((s) => s.times > 0);
      if (!script.dropAfter)
        return error(res, script.status ?? 500, "M_UNKNOWN", "scripted failure");
    }
    const answer = (status: number, value: unknown) => {
      if (script?.dropAfter) return void req.socket.destroy();
      json(res, status, value);
    };
    const segments = path.split("/").map(decodeURIComponent);

    if (method === "GET" && path === "/account/whoami")
      return answer(200, { user_id: FAKE_MATRIX_BOT.userId, device_id: FAKE_MATRIX_BOT.deviceId });
    if (method === "GET" && path === "/sync") {
      const sinceParam = url.searchParams.get("since");
      syncs.push(sinceParam);
      const since = sinceParam ? Number(sinceParam.slice(1)) : undefined;
      if (since !== undefined && !Number.isFinite(since))
        return error(res, 400, "M_INVALID_PARAM", "bad since token");
      const timeout = Math.min(Number(url.searchParams.get("timeout") ?? 0) || 0, 60_000);
      if (since !== undefined && !stopping) await world.waitPast(since, timeout);
      const filter = JSON.parse(url.searchParams.get("filter") ?? "{}") as {
        room?: { timeline?: { limit?: number } };
      };
      return answer(200, world.sync(since, filter.room?.timeline?.limit ?? 10));
    }
    // /rooms/{roomId}/send/{type}/{txnId}
    if (method === "PUT" && segments[1] === "rooms" && segments[3] === "send") {
      const [roomId, type, txnId] = [segments[2]!, segments[4]!, segments[5]!];
      if (!world.joined.has(roomId)) return error(res, 403, "M_FORBIDDEN", "User not in room");
      const key = `${token}\u0000${txnId}`;
      const known = world.transactions.get(key);
      if (known) return answer(200, { event_id: known });
      const event = world.append(roomId, {
        type,
        sender: FAKE_MATRIX_BOT.userId,
        content: parsed,
        unsigned: { transaction_id: txnId },
      });
      world.transactions.set(key, event.event_id);
      return answer(200, { event_id: event.event_id });
    }
    if (
      method === "POST" &&
      ((segments[1] === "join" && segments[2]) ||
        (segments[1] === "rooms" && segments[3] === "join"))
    ) {
      const target = segments[2]!;
      const roomId = target.startsWith("#") ? world.roomByAlias(target)?.roomId : target;
      if (!roomId || !world.join(roomId))
        return error(res, 403, "M_FORBIDDEN", "You are not invited to this room.");
      return answer(200, { room_id: roomId });
    }
    if (method === "GET" && segments[1] === "directory" && segments[2] === "room") {
      const room = world.roomByAlias(segments[3] ?? "");
      if (!room) return error(res, 404, "M_NOT_FOUND", "Room alias not found");
      return answer(200, { room_id: room.roomId, servers: ["fake.test"] });
    }
    if (segments[1] === "user" && segments[3] === "account_data") {
      if (segments[2] !== FAKE_MATRIX_BOT.userId)
        return error(res, 403, "M_FORBIDDEN", "Cannot access another user's account data");
      const type = segments[4] ?? "";
      if (method === "PUT") {
        world.setAccountData(type, parsed);
        return answer(200, {});
      }
      const content = world.accountData.get(type);
      return content
        ? answer(200, content)
        : error(res, 404, "M_NOT_FOUND", "Account data not found");
    }
    if (method === "PUT" && segments[1] === "rooms" && segments[3] === "typing")
      return answer(200, {});
    if (method === "GET" && segments[1] === "rooms" && segments[3] === "event") {
      const event = world.rooms
        .get(segments[2]!)
        ?.timeline.find((candidate) => candidate.event_id === segments[4]);
      return event ? answer(200, event) : error(res, 404, "M_NOT_FOUND", "Event not found");
    }
    return error(res, 404, "M_UNRECOGNIZED", `Unrecognized request: ${method} ${path}`);
  }

  async function control(res: ServerResponse, url: URL, body: string): Promise<unknown> {
    const input = controlBody(body);
    switch (url.pathname) {
      case "/_control/room": {
        const roomId = String(input.roomId);
        world.room(roomId, {
          ...(typeof input.alias === "string" ? { alias: input.alias } : {}),
          encrypted: input.encrypted === true,
          public: input.public === true,
        });
        if (input.joined === true) world.joined.add(roomId);
        return json(res, 200, { roomId });
      }
      case "/_control/invite":
        world.invite(String(input.roomId), String(input.inviter), input.isDirect === true);
        return json(res, 200, {});
      case "/_control/direct": {
        const direct = { ...(world.accountData.get("m.direct") ?? {}) } as Record<string, string[]>;
        const userId = String(input.userId);
        direct[userId] = [...new Set([...(direct[userId] ?? []), String(input.roomId)])];
        world.setAccountData("m.direct", direct);
        return json(res, 200, {});
      }
      case "/_control/message": {
        const roomId = String(input.roomId);
        const room = world.room(roomId);
        const type = typeof input.type === "string" ? input.type : "m.room.message";
        const content =
          (input.content as Record<string, unknown> | undefined) ??
          ({ msgtype: "m.text", body: String(input.body ?? "") } as Record<string, unknown>);
        const event =
          room.encrypted && type === "m.room.message"
            ? world.append(roomId, {
                type: "m.room.encrypted",
                sender: String(input.sender),
                content: {
                  algorithm: "m.megolm.v1.aes-sha2",
                  ciphertext: "AwgAEn…",
                  session_id: "s",
                },
              })
            : world.append(roomId, { type, sender: String(input.sender), content });
        return json(res, 200, { event_id: event.event_id });
      }
      case "/_control/script":
        scripts.push({
          method: String(input.method),
          path: String(input.path),
          times: Number(input.times ?? 1),
          ...(typeof input.status === "number" ? { status: input.status } : {}),
          ...(input.dropAfter === true ? { dropAfter: true } : {}),
        });
        return json(res, 200, {});
      case "/_control/sent": {
        const room = world.rooms.get(url.searchParams.get("room") ?? "");
        return json(
          res,
          200,
          (room?.timeline ?? []).filter(
            (event) => event.sender === FAKE_MATRIX_BOT.userId && event.type !== "m.room.member",
          ),
        );
      }
      case "/_control/syncs":
        return json(res, 200, { syncs, head: `s${world.head}` });
      case "/_control/joined":
        return json(res, 200, [...world.joined]);
      case "/_control/calls": {
        const prefix = url.searchParams.get("path") ?? "";
        return json(
          res,
          200,
          calls.filter((call) => call.path.startsWith(prefix)),
        );
      }
      default:
        return json(res, 404, { error: "unknown control path" });
    }
  }

  const server = fakeServer(async (req, res, url, body) => {
    if (url.pathname.startsWith("/_control/")) return control(res, url, body);
    if (url.pathname.startsWith(`${API}/`)) return api(req, res, url, body);
    return json(res, 404, { errcode: "M_UNRECOGNIZED", error: "Unrecognized request" });
  });
  const listening = await listenOnLoopback(server);
  return {
    url: listening.url,
    world,
    async stop() {
      stopping = true;
      world.wakeAll();
      await listening.stop();
    },
  };
}
