import { inboundEnvelopeSchema, type ReplyRoute } from "../../functions/core/envelope.ts";
import { AUTOMATION_CHANNEL } from "../../functions/core/operator-channels.ts";
import type { CronJob, CronRun } from "../../functions/automation/cron-job.ts";
import type { HeartbeatPlan } from "../../functions/automation/heartbeat.ts";
import type { HookAction } from "../../functions/automation/hook-request.ts";
import { mainSessionKey } from "../../functions/routing/session-key.ts";
import type { RoutedEvent } from "../session-api.ts";

/**
 * The events the gateway raises itself, shaped as every other event a SessionDO accepts, each
 * with a dedup key derived from what it is (the cron run id, the beat's due moment, the hook's
 * idempotency key): handing one over twice — a retried alarm, a crash before the scheduler
 * recorded the hand-over — stores it once, so it runs once.
 */

function envelope(args: {
  dedupKey: string;
  kind: "message" | "system";
  senderId: string;
  text: string;
  route: ReplyRoute;
  now: number;
}) {
  return inboundEnvelopeSchema.parse({
    dedupKey: args.dedupKey,
    kind: args.kind,
    channel: AUTOMATION_CHANNEL,
    chatType: "direct",
    peerId: args.senderId,
    senderId: args.senderId,
    text: args.text,
    receivedAt: args.now,
    route: args.route,
  });
}

function quietRoute(to: string): ReplyRoute {
  return { channel: AUTOMATION_CHANNEL, accountId: "default", to };
}

/** A cron run as its session's event: a system event (main) or an unattended turn (isolated). */
export function cronRunEvent(
  job: CronJob,
  run: CronRun,
  isolatedTimeoutSeconds: number,
  now: number,
): RoutedEvent {
  const base = { agentId: job.agentId, sessionKey: run.sessionKey };
  if (job.payload.kind === "systemEvent") {
    return {
      ...base,
      envelope: envelope({
        dedupKey: `cron:${run.id}`,
        kind: "system",
        senderId: `cron:${job.id}`,
        text: job.payload.text,
        route: quietRoute(`cron:${job.id}`),
        now,
      }),
      automation: {
        source: "cron",
        action: "system-event",
        jobId: job.id,
        cronRunId: run.id,
        deleteAfterRun: job.deleteAfterRun,
      },
    };
  }
  const { delivery } = job;
  const route: ReplyRoute =
    delivery.mode === "announce"
      ? {
          channel: delivery.channel,
          accountId: delivery.accountId ?? "default",
          to: delivery.to,
          ...(delivery.threadId ? { threadId: delivery.threadId } : {}),
        }
      : quietRoute(`cron:${job.id}`);
  return {
    ...base,
    envelope: envelope({
      dedupKey: `cron:${run.id}`,
      kind: "message",
      senderId: `cron:${job.id}`,
      text: job.payload.message,
      route,
      now,
    }),
    overrides: job.payload.model ? { model: job.payload.model } : undefined,
    automation: {
      source: "cron",
      action: "agent-turn",
      jobId: job.id,
      cronRunId: run.id,
      deleteAfterRun: job.deleteAfterRun,
      timeoutSeconds: job.payload.timeoutSeconds ?? isolatedTimeoutSeconds,
      freshSession: true,
    },
  };
}

/** A heartbeat turn in the agent's main session; `key` names the beat (its due moment, or a wake id). */
export function heartbeatEvent(
  plan: HeartbeatPlan,
  key: string,
  reason: "interval" | "wake",
  now: number,
): RoutedEvent {
  return {
    agentId: plan.agentId,
    sessionKey: mainSessionKey(plan.agentId),
    envelope: envelope({
      dedupKey: `heartbeat:${plan.agentId}:${key}`,
      kind: "message",
      senderId: "heartbeat",
      text: plan.prompt,
      route: plan.route ?? quietRoute("heartbeat"),
      now,
    }),
    overrides: plan.model ? { model: plan.model } : undefined,
    automation: {
      source: "heartbeat",
      action: "heartbeat",
      heartbeat: { ackMaxChars: plan.ackMaxChars, reason },
      timeoutSeconds: plan.timeoutSeconds ?? Math.min(600, Math.round(plan.everyMs / 1000)),
    },
  };
}

/** A system event for an agent's main session (hooks' /wake, `edgeclaw system event`). */
export function systemEventFor(
  agentId: string,
  text: string,
  dedupKey: string,
  source: "hook" | "cron",
  now: number,
): RoutedEvent {
  return {
    agentId,
    sessionKey: mainSessionKey(agentId),
    envelope: envelope({
      dedupKey,
      kind: "system",
      senderId: source,
      text,
      route: quietRoute(source),
      now,
    }),
    automation: { source, action: "system-event" },
  };
}

/**
 * A hook's agent turn. Without a session key of its own, each call gets a fresh session named
 * after its idempotency key (or a random id), so a retried call reaches the same session and is
 * stored once. The body is a third party's text: the session fences it under the hook's name.
 */
export function hookAgentEvent(
  action: Extract<HookAction, { kind: "agent" }>,
  id: string,
  now: number,
): RoutedEvent {
  const sessionKey = action.sessionKey
    ? action.sessionKey.startsWith("agent:")
      ? action.sessionKey
      : `agent:${action.agentId}:${action.sessionKey}`
    : `agent:${action.agentId}:hook:${id}`;
  return {
    agentId: action.agentId,
    sessionKey,
    envelope: envelope({
      dedupKey: `hook:${action.agentId}:${id}`,
      kind: "message",
      senderId: "hook",
      text: action.message,
      route: action.route ?? quietRoute("hook"),
      now,
    }),
    overrides: action.model ? { model: action.model } : undefined,
    automation: {
      source: "hook",
      action: "agent-turn",
      untrustedSource: action.name,
      timeoutSeconds: action.timeoutSeconds,
    },
  };
}
