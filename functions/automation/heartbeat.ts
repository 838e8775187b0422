import type { EdgeclawConfig } from "../config/schema.ts";
import type { ReplyRoute } from "../core/envelope.ts";
import { adapterFor } from "../channels/registry.ts";
import { listAgents, defaultAgentId } from "../routing/agents.ts";
import { normalizeAgentId } from "../routing/ids.ts";
import { parseDuration } from "./schedule.ts";
import { isTimeZone, wallClock } from "../core/time-zone.ts";

/**
 * The heartbeat (gateway/heartbeat): a periodic turn in an agent's main session. This module is
 * the config side — which agents beat, how often, inside which hours, where an alert goes — and
 * the reply contract (HEARTBEAT_OK acknowledgements are dropped). The scheduler Durable Object
 * arms the beats; the SessionDO runs them.
 */

export const HEARTBEAT_TOKEN = "HEARTBEAT_OK";
export const HEARTBEAT_FILE = "HEARTBEAT.md";

export interface HeartbeatPlan {
  agentId: string;
  everyMs: number;
  prompt: string;
  model?: string;
  ackMaxChars: number;
  timeoutSeconds?: number;
  activeHours?: { start: string; end: string; timezone?: string };
  /** Where an alert goes; null = run for internal state only (`target: "none"`). */
  route: ReplyRoute | null;
}

export type HeartbeatResolution =
  | { ok: true; plan: HeartbeatPlan }
  | { ok: false; agentId: string; reason: "disabled" | "no-route" | "dm-blocked" };

/**
 * The heartbeat of every agent that beats: `agents.defaults.heartbeat` merged with each agent's
 * own block; once any listed agent has a block, only those agents beat (OpenClaw's scope rule).
 */
export function resolveHeartbeats(config: EdgeclawConfig): HeartbeatResolution[] {
  const defaults = config.agents.defaults.heartbeat;
  const withBlock = config.agents.list.filter((agent) => agent.heartbeat !== undefined);
  const agents = withBlock.length
    ? withBlock.map((agent) => ({ id: normalizeAgentId(agent.id), own: agent.heartbeat }))
    : [{ id: defaultAgentId(config), own: undefined }];
  const known = new Set(listAgents(config).map((agent) => agent.id));
  return agents
    .filter((agent) => known.size === 0 || known.has(agent.id))
    .map(({ id, own }): HeartbeatResolution => {
      const merged = { ...defaults, ...stripUndefined(own ?? {}) };
      const everyMs = parseDuration(merged.every, "m");
      if (everyMs <= 0) return { ok: false, agentId: id, reason: "disabled" };
      const route = resolveTarget(config, merged.target, merged.to, merged.accountId);
      if (route === undefined) return { ok: false, agentId: id, reason: "no-route" };
      // `directPolicy: "block"` keeps the turn but refuses direct-message delivery; owner routes are DMs.
      if (route && merged.directPolicy === "block" && merged.target === "owner")
        return { ok: false, agentId: id, reason: "dm-blocked" };
      return {
        ok: true,
        plan: {
          agentId: id,
          everyMs,
          prompt: merged.prompt,
          model: merged.model,
          ackMaxChars: merged.ackMaxChars,
          timeoutSeconds: merged.timeoutSeconds,
          activeHours: merged.activeHours,
          route,
        },
      };
    });
}

/**
 * `owner`: the first concrete `<channel>:<id>` entry of commands.ownerAllowFrom on a channel this
 * gateway can send on (never a group); `none`: no delivery; a channel id: that channel and `to`.
 * undefined = no route (the beat is skipped with reason no-route, and nothing is armed for it).
 */
function resolveTarget(
  config: EdgeclawConfig,
  target: string,
  to: string | undefined,
  accountId: string | undefined,
): ReplyRoute | null | undefined {
  if (target === "none") return null;
  if (target === "owner") {
    for (const entry of config.commands.ownerAllowFrom) {
      const match = /^([a-z0-9_-]+):(?:user:)?([^:*\s][^\s]*)$/i.exec(entry.trim());
      if (!match) continue;
      const channel = match[1]!.toLowerCase();
      if (!adapterFor(channel)) continue;
      return { channel, accountId: accountId ?? "default", to: match[2]! };
    }
    return undefined;
  }
  // `last` follows the session's own last route: the main session resolves it when the beat runs.
  if (target === "last") return { channel: "automation", accountId: "default", to: "last" };
  if (!to || !adapterFor(target)) return undefined;
  return { channel: target, accountId: accountId ?? "default", to };
}

/**
 * Inside `activeHours`? `start` inclusive, `end` exclusive ("24:00" = end of day); start = end is
 * a zero-width window (never inside); start > end spans midnight. The zone: an IANA id, "local"
 * (the host: UTC on Workers) or "user"/absent (agents.defaults.userTimezone, else the host).
 */
export function withinActiveHours(
  activeHours: HeartbeatPlan["activeHours"],
  now: number,
  userTimezone: string | undefined,
): boolean {
  if (!activeHours) return true;
  const start = minutes(activeHours.start);
  const end = minutes(activeHours.end);
  if (start === end) return false;
  const zone = activeHours.timezone;
  const tz =
    zone && zone !== "user" && zone !== "local" && isTimeZone(zone)
      ? zone
      : zone === "local"
        ? "UTC"
        : (userTimezone ?? "UTC");
  const clock = wallClock(now, tz);
  const at = clock.hour * 60 + clock.minute;
  return start < end ? at >= start && at < end : at >= start || at < end;
}

function minutes(hhmm: string): number {
  const [h, m] = hhmm.split(":").map(Number);
  return (h ?? 0) * 60 + (m ?? 0);
}

/**
 * The heartbeat reply contract: HEARTBEAT_OK at the start or the end is an acknowledgement; it is
 * removed, and the reply dropped when at most `ackMaxChars` characters remain. In the middle of a
 * text it means nothing special. Returns the text to deliver, or null to deliver nothing.
 */
export function heartbeatReply(text: string, ackMaxChars: number): string | null {
  let rest = text.trim();
  let acked = false;
  if (rest.startsWith(HEARTBEAT_TOKEN)) {
    rest = rest.slice(HEARTBEAT_TOKEN.length).trim();
    acked = true;
  }
  if (rest.endsWith(HEARTBEAT_TOKEN)) {
    rest = rest.slice(0, -HEARTBEAT_TOKEN.length).trim();
    acked = true;
  }
  if (!acked) return rest.length ? rest : null;
  return rest.length <= ackMaxChars ? null : rest;
}

/**
 * HEARTBEAT.md with nothing but blank lines, headings and empty list items: no beat runs for it
 * (reason empty-heartbeat-file). An absent file is not empty: the beat runs on its prompt alone.
 */
export function isEffectivelyEmpty(content: string | undefined): boolean {
  if (content === undefined) return false;
  return content
    .split("\n")
    .map((line) => line.trim())
    .every(
      (line) =>
        line === "" ||
        /^#+(\s|$)/.test(line) ||
        /^[-*+]\s*(\[[ x]?\])?\s*$/i.test(line) ||
        /^<!--.*-->$/.test(line),
    );
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
