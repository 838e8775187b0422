import type { ChannelSimulator, SimulatedMessage } from "./simulator.ts";
import type { SimulateState } from "./state.ts";

export interface SimulateOutcome {
  /** The gateway's answer to the webhook. */
  status: number;
  /** Replies that arrived in the conversation after the webhook, as the platform shows them. */
  replies: string[];
}

/**
 * Posts one simulated platform webhook to the gateway and waits for the answer to show up on the
 * fake platform: new replies in the conversation, then `quietMs` without change (a streamed
 * preview is edited into its answer meanwhile), or `timeoutMs` in all.
 */
export async function simulateOnce(
  simulator: ChannelSimulator,
  channel: SimulateState["channels"][string],
  message: SimulatedMessage,
  options: { timeoutMs?: number; quietMs?: number; pollMs?: number } = {},
): Promise<SimulateOutcome> {
  const { timeoutMs = 60_000, quietMs = 1_500, pollMs = 250 } = options;
  const before = await simulator.replies(channel.fakeUrl, message);
  const request = await simulator.webhook(message, {
    webhookUrl: channel.webhookUrl,
    secrets: channel.secrets,
    fakeUrl: channel.fakeUrl,
  });
  const response = await fetch(request);
  await response.body?.cancel();
  if (!response.ok) return { status: response.status, replies: [] };
  const until = Date.now() + timeoutMs;
  let last = "";
  let changedAt = Date.now();
  let replies: string[] = [];
  while (Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, pollMs));
    const now = (await simulator.replies(channel.fakeUrl, message)).slice(before.length);
    const seen = JSON.stringify(now);
    if (seen !== last) {
      [last, changedAt, replies] = [seen, Date.now(), now];
    } else if (replies.length > 0 && Date.now() - changedAt >= quietMs) {
      break;
    }
  }
  return { status: response.status, replies };
}
