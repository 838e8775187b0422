import type { EdgeclawConfig } from "../../../functions/config/schema.ts";
import { adapterFor, HTTP_CHANNELS } from "../../../functions/channels/registry.ts";
import { describeAttachments } from "../../../functions/channels/attachments.ts";
import { voiceNoteNotice } from "../../../functions/agent/transcribe.ts";
import { sendContextFor } from "../../../functions/channels/channel-account.ts";
import { resolveHistoryLimit, senderLabel } from "../../../functions/routing/group-history.ts";
import { resolveResetPolicy, sessionResetDue } from "../../../functions/routing/session-reset.ts";
import { handleCommandMessage } from "../../../functions/commands/execute.ts";
import { applyQueueMode } from "./queue-mode.ts";
import { queueSystemEvent } from "./system-events.ts";
import { triageAutomation } from "./automation.ts";
import type { InboxRow } from "../storage.ts";
import { accessFor, logRefusalOnce, settleTurnedAway } from "./triage-access.ts";
import type { TriageHost } from "./triage-host.ts";
import { lastInteractionAt } from "../last-inbound.ts";
import { mediaIntake } from "./triage-media.ts";

/**
 * Decides what a newly accepted event becomes: dropped, answered without the model (pairing code,
 * command, directive), kept as group context, or queued for a run — and applies the queue mode when
 * a run is already active (steer waits for the next boundary, interrupt aborts the run, cap/drop
 * bound the queue). Runs inside the SessionDO after the ack, so it may read Postgres.
 */
export async function triageInbound(row: InboxRow, host: TriageHost): Promise<void> {
  const { envelope, agentId, sessionKey } = row.event;
  // The gateway's own events (cron, heartbeat, hooks): authenticated where they were raised.
  if (row.event.automation) return triageAutomation(row, row.event.automation, host);
  const decision = await accessFor(row, host);
  const now = Date.now();
  switch (decision.kind) {
    case "drop":
      host.store.inbox.decide(row.seq, {
        outcome: "refused",
        reason: decision.reason,
        ...(decision.configKey ? { configKey: decision.configKey } : {}),
      });
      host.refused(row, "access_denied");
      settleTurnedAway(row, host, now);
      logRefusalOnce(row, host, decision.reason, decision.configKey);
      host.emit(row.seq, {
        type: "error",
        code: "dropped",
        message: decision.configKey
          ? `${decision.reason} (${decision.configKey})`
          : decision.reason,
      });
      return;
    case "pairing":
      host.store.inbox.decide(row.seq, {
        outcome: "pairing",
        reason: `the sender is not allowed yet (dmPolicy pairing): a pairing code was sent`,
        configKey: `channels.${envelope.channel}.allowFrom`,
      });
      host.refused(row, "pairing");
      host.reply(row, [decision.replyText], true, { private: true });
      return;
    case "history-only": {
      // The post's mentioned twin (Slack's app_mention) may have arrived while access was decided.
      const fresh = host.store.inbox.bySeq(row.seq);
      if (!envelope.wasMentioned && fresh?.state === "new" && fresh.event.envelope?.wasMentioned)
        return triageInbound(fresh, host);
      host.store.inbox.decide(row.seq, {
        outcome: "no-mention",
        reason: "the bot was not mentioned: kept as group context, no run",
        configKey: `channels.${envelope.channel}.requireMention`,
      });
      host.store.groupHistory.push(
        senderLabel(envelope),
        envelope.text,
        envelope.receivedAt,
        historyLimit(host.config, row),
      );
      host.store.inbox.settle(row.seq, null, now);
      host.emit(row.seq, {
        type: "error",
        code: "history-only",
        message: "kept as group context (no mention)",
      });
      return;
    }
    case "allow":
      break;
  }

  if (envelope.kind === "system") {
    // Context for the next run, nothing more: no run, no model call, no reply, no ack reaction.
    host.store.inbox.decide(row.seq, {
      outcome: "context",
      reason: "a system event: kept as context for the next run",
    });
    queueSystemEvent(
      host.store,
      { text: envelope.text, at: envelope.receivedAt },
      host.config.messages.systemEvents.maxQueued,
    );
    host.store.inbox.settle(row.seq, null, now);
    host.emit(row.seq, {
      type: "error",
      code: "system-event",
      message: "kept as context for the next run",
    });
    return;
  }

  resetIfStale(row, host, now);

  const outcome = await handleCommandMessage(
    envelope.text,
    { commandAuthorized: decision.commandAuthorized },
    host.control,
    {
      config: host.config,
      agentId,
      sessionKey,
      sender: {
        channel: envelope.channel,
        accountId: envelope.accountId,
        senderId: envelope.senderId,
        senderName: envelope.senderName,
        chatType: envelope.chatType,
      },
      senderIsOwner: decision.senderIsOwner,
      now,
      route: envelope.route,
    },
  );
  if (outcome.action === "drop") {
    host.store.inbox.decide(row.seq, { outcome: "refused", reason: "command not authorized" });
    // An unauthorized command-only message is ignored silently (tools/slash-commands), unless the
    // platform keeps its sender waiting for an answer (a Discord slash command): then "not authorized".
    settleTurnedAway(row, host, Date.now());
    host.emit(row.seq, { type: "error", code: "dropped", message: "command not authorized" });
    return;
  }
  if (outcome.action === "reply") {
    host.store.inbox.decide(row.seq, { outcome: "command", reason: "answered by a command" });
    host.reply(row, outcome.replies.length ? outcome.replies : ["✅"], true);
    return;
  }
  if (outcome.replies.length) host.reply(row, outcome.replies, false);
  const text = outcome.text;
  const oneShot: Record<string, string> = Object.fromEntries(
    Object.entries(outcome.oneShot).flatMap(([key, value]) =>
      typeof value === "string" ? [[key, value]] : [],
    ),
  );

  const files = await describeAttachments(
    envelope.attachments,
    adapterFor(envelope.channel),
    envelope.route,
    sendContextFor(
      { env: host.env, config: host.config, signal: AbortSignal.timeout(30_000) },
      envelope.route,
    ),
    mediaIntake(host, row, agentId, sessionKey),
  );
  // A voice note that could not be heard is said to its sender in one line, never silence.
  const unheard = files.find((file) => file.transcriptionError !== undefined);
  if (unheard) host.reply(row, [voiceNoteNotice(unheard.transcriptionError!)], false);
  host.queue(
    {
      seq: row.seq,
      prepared: {
        text,
        // A channel sender's words are third-party text: the run fences them (functions/agent/turn-text.ts).
        from: HTTP_CHANNELS.has(envelope.channel)
          ? undefined
          : {
              channel: envelope.channel,
              chatType: envelope.chatType,
              label: senderLabel(envelope),
            },
        attachments: files.length ? files : undefined,
        senderIsOwner: decision.senderIsOwner,
        oneShot,
        queuedBehindRun: host.activeRun !== null,
      },
      // A person's message (heartbeats, cron and hook events never get here: triageAutomation; a
      // system event returned above): the session's last inbound message, read from this row
      // (last-inbound.ts), so its idle/daily freshness counts from now.
      decision: { outcome: "accepted", userAt: Date.now() },
    },
    // Held for a run that may start at once when this triage left nothing durable that must not
    // happen twice (no reply queued, no file stored or transcribed): a crash before the run starts
    // triages the message again. Behind a run it queues (queue modes, debounce, cap).
    !host.activeRun && !outcome.replies.length && !envelope.attachments?.length,
  );
  host.store.meta.set("chatType", envelope.chatType);
  await host.progressAccepted(row);
  if (host.activeRun) applyQueueMode(row, host);
}

/** session.reset / resetByType / resetByChannel: a stale session starts over before this message. */
function resetIfStale(row: InboxRow, host: TriageHost, now: number): void {
  const startedAt = host.store.meta.get("sessionStartedAt");
  if (!startedAt) return;
  // previous_response_id asks for this conversation's transcript: no freshness reset replaces it.
  if (row.event.continuesResponse) return;
  const { envelope } = row.event;
  const policy = resolveResetPolicy(host.config, {
    channel: envelope.channel,
    chatType: envelope.chatType,
    threadId: envelope.threadId,
  });
  const verdict = sessionResetDue({
    policy,
    sessionStartedAt: Number(startedAt),
    lastInteractionAt: lastInteractionAt(host.store),
    now,
    timeZone: host.config.agents.defaults.userTimezone,
  });
  if (verdict.reset) host.rotateSession(verdict.reason);
}

function historyLimit(config: EdgeclawConfig, row: InboxRow): number {
  const { envelope } = row.event;
  return resolveHistoryLimit(config, {
    channel: envelope.channel,
    accountId: envelope.accountId,
    chatType: envelope.chatType,
    peerId: envelope.peerId,
  });
}
