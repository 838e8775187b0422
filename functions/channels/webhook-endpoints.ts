import type { EdgeclawConfig } from "../config/schema.ts";
import { webhookRouteTable } from "./webhook-routes.ts";

/** A path a platform must be told to call, with a label for people (`Slack (account ops)`). */
export interface WebhookEndpoint {
  label: string;
  path: string;
}

/**
 * Every registered channel's webhook URLs as its config gives them (the `npm run dev` banner, setup
 * texts). Pure config reading: channel modules load in Node as well as in the Worker.
 */
export function webhookEndpoints(config: EdgeclawConfig): WebhookEndpoint[] {
  return [...webhookRouteTable(config).values()].map(({ route }) => ({
    label: route.label,
    path: route.path,
  }));
}
