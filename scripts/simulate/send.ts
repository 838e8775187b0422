import { storedEvents } from "../../functions/channels/webhook-ack.ts";
import type { ChannelSimulator, SimulatedMessage } from "./simulator.ts";
import type { SimulateState } from "./state.ts";

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
  /** The gateway's answer to the webhook. */
  status: number;
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

/** Outcomes after which no reply from a run will come: the answer (if any) is already on its way. */
const FINAL_WITHOUT_RUN = new Set(["refused", "no-mention", "context", "failed"]);

/**
 * Posts one simulated platform webhook to the gateway and waits for the answer to show up on the
 * fake platform: new replies in the conversation, then `quietMs` without change (a streamed
 * preview is edited into its answer meanwhile), or `timeoutMs` in all. With `decisionOf`, it also
 * asks the Worker what it decided for the event (named by the ack's `x-edgeclaw-event`): a refusal,
 * a message kept as group context or a system event ends the wait at once (after `quietMs` for a
 * refusal notice the platform shows), so the reason is printed instead of a timeout.
 */
export async function simulateOnce(
  simulator: ChannelSimulator,
  channel: SimulateState["channels"][string],
  message: SimulatedMessage,
  options: {
    timeoutMs?: number;
    quietMs?: number;
    pollMs?: number;
    decisionOf?: DecisionLookup;
  } = {},
): Promise<SimulateOutcome> {
  const { timeoutMs = 60_000, quietMs = 1_500, pollMs = 250, decisionOf } = options;
  const before = await simulator.replies(channel.fakeUrl, message);
  const request = await simulator.webhook(message, {
    webhookUrl: channel.webhookUrl,
    secrets: channel.secrets,
    fakeUrl: channel.fakeUrl,
  });
  const response = await fetch(request);
  await response.body?.cancel();
  if (!response.ok) return { status: response.status, replies: [] };
  // The first event the webhook stored is the message this simulation made.
  const event = storedEvents(response.headers.get("x-edgeclaw-event"))[0];
  const until = Date.now() + timeoutMs;
  let last = "";
  let changedAt = Date.now();
  let replies: string[] = [];
  let decision: SimulatedDecision | undefined;
  while (Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, pollMs));
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
  return { status: response.status, replies, ...(decision ? { decision } : {}) };
}
