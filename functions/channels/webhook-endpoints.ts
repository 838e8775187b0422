import type { EdgeclawConfig } from "../config/schema.ts";
import { slackWebhookEndpoints } from "./slack/config.ts";

/** A path a platform must be told to call, with a label for people (`Slack (account ops)`). */
export interface WebhookEndpoint {
  label: string;
  path: string;
}

/**
 * Each webhook channel's Request URLs as its config gives them. Pure config reading, apart from the
 * adapters (which load the Worker), so Node tooling — the `npm run dev` banner — can print them.
 * One line per channel that receives webhooks.
 */
const endpointLists: Array<(config: EdgeclawConfig) => WebhookEndpoint[]> = [slackWebhookEndpoints];

export function webhookEndpoints(config: EdgeclawConfig): WebhookEndpoint[] {
  return endpointLists.flatMap((list) => list(config));
}
