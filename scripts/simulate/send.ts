import { storedEvents } from "../../functions/channels/webhook-ack.ts";
import { tappedResult } from "./companion-tap.ts";
import type { ChannelSimulator, SimulatedMessage } from "./simulator.ts";
import type { SimulatedChannel } from "./state.ts";

/** What the gateway decided for the posted event (GET /admin/sessions/:key/events/:dedupKey). */
export interface SimulatedDecision {
  sessionKey: string;
  dedupKey: string;
  outcome:
    | "pending"
    | "accepted"
    | "pairing"
    | "refused"
    | "no-mention"
    | "context"
    | "command"
    | "failed";
  reason?: string;
  configKey?: string;
}

export interface SimulateOutcome {
  /** How the message went in: a webhook the gateway answered, or over the companion's socket. */
  via: "webhook" | "companion";
  /** The gateway's answer to the webhook; over the companion, 200 once the Worker stored the event, 500 when it refused it. */
  status: number;
  /** Over the companion: why the Worker could not store the event, or why it took nothing from it. */
  error?: string;
  dropped?: string[];
  /** Replies that arrived in the conversation after the webhook, as the platform shows them. */
  replies: string[];
  /** What the Worker decided for the event, when it said which event it stored and could be asked. */
  decision?: SimulatedDecision;
}

/** Asks the gateway what became of one stored event; undefined when it cannot say (yet). */
export type DecisionLookup = (event: {
  sessionKey: string;
  dedupKey: string;
}) => Promise<SimulatedDecision | undefined>;

/** How long a socket simulation waits for the companion to be connected to the fake (it connects once dev is ready). */
const COMPANION_CONNECT_MS = 30_000;

/** Outcomes after which no reply from a run will come: the answer (if any) is already on its way. */
const FINAL_WITHOUT_RUN = new Set(["refused", "no-mention", "context", "failed"]);

/**
 * Sends one simulated message as the platform would and waits for the answer to show up on the
 * fake platform: new replies in the conversation, then `quietMs` without change (a streamed preview
 * is edited into its answer meanwhile), or `timeoutMs` in all. A webhook channel's message is posted
 * to the gateway; a companion channel's is handed to the fake, which sends it over the socket the
 * running companion holds. With `decisionOf`, it also asks the Worker what it decided for the event
 * — named by the webhook's ack (`x-edgeclaw-event`), or by the Worker's answer to the companion
 * (read from the dev's tap, `tapUrl`): a refusal, a message kept as group context or a system event
 * ends the wait at once (after `quietMs` for a refusal notice the platform shows), so the reason is
 * printed instead of a timeout.
 */
export async function simulateOnce(
  simulator: ChannelSimulator,
  channel: SimulatedChannel,
  message: SimulatedMessage,
  options: {
    timeoutMs?: number;
    quietMs?: number;
    pollMs?: number;
    decisionOf?: DecisionLookup;
    /** The dev's companion tap (state.companionTapUrl). */
    tapUrl?: string;
  } = {},
): Promise<SimulateOutcome> {
  const { timeoutMs = 60_000, quietMs = 1_500, pollMs = 250, decisionOf } = options;
  const started = Date.now();
  const until = started + timeoutMs;
  const before = await simulator.replies(channel.fakeUrl, message);
  const delivered = await deliver(simulator, channel, message, until);
  if (delivered.status >= 300) return { ...delivered.outcome, replies: [] };
  let event = delivered.event;
  let last = "";
  let changedAt = Date.now();
  let replies: string[] = [];
  let decision: SimulatedDecision | undefined;
  const outcome: SimulateOutcome = { ...delivered.outcome, replies };
  while (Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, pollMs));
    if (!event && delivered.eventId && options.tapUrl) {
      const answer = await tappedResult(options.tapUrl, simulator.id, delivered.eventId);
      if (answer?.status === "failed")
        return { ...outcome, status: 500, error: answer.error ?? "not stored", replies: [] };
      if (answer) {
        event = answer.events[0];
        if (answer.dropped?.length) outcome.dropped = answer.dropped;
        // Stored, but nothing of it reached a session (the parser or the routing dropped it).
        if (!event) return { ...outcome, replies };
      }
    }
    if (event && decisionOf && (!decision || decision.outcome === "pending"))
      decision = (await decisionOf(event)) ?? decision;
    const now = (await simulator.replies(channel.fakeUrl, message)).slice(before.length);
    const seen = JSON.stringify(now);
    if (seen !== last) {
      [last, changedAt, replies] = [seen, Date.now(), now];
    } else if (replies.length > 0 && Date.now() - changedAt >= quietMs) {
      break;
    } else if (
      decision &&
      FINAL_WITHOUT_RUN.has(decision.outcome) &&
      Date.now() - changedAt >= quietMs
    ) {
      break;
    }
  }
  return { ...outcome, replies, ...(decision ? { decision } : {}) };
}

/** Puts the message on its way: the webhook's answer, or the companion's event id for it. */
async function deliver(
  simulator: ChannelSimulator,
  channel: SimulatedChannel,
  message: SimulatedMessage,
  until: number,
): Promise<{
  status: number;
  outcome: Omit<SimulateOutcome, "replies">;
  event?: { sessionKey: string; dedupKey: string };
  eventId?: string;
}> {
  if (channel.via === "companion") {
    if (!simulator.socket) throw new Error(`the ${simulator.id} simulator has no socket side`);
    const { eventId } = await simulator.socket.deliver(message, {
      fakeUrl: channel.fakeUrl,
      secrets: channel.secrets,
      deadline: Math.min(until, Date.now() + COMPANION_CONNECT_MS),
    });
    return { status: 200, outcome: { via: "companion", status: 200 }, eventId };
  }
  if (!simulator.webhook || !channel.webhookUrl)
    throw new Error(`the ${simulator.id} simulator has no webhook side`);
  const request = await simulator.webhook(message, {
    webhookUrl: channel.webhookUrl,
    secrets: channel.secrets,
    fakeUrl: channel.fakeUrl,
  });
  const response = await fetch(request);
  await response.body?.cancel();
  return {
    status: response.status,
    outcome: { via: "webhook", status: response.status },
    // The first event the webhook stored is the message this simulation made.
    event: storedEvents(response.headers.get("x-edgeclaw-event"))[0],
  };
}
