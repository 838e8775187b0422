import type { EdgeclawConfig } from "../config/schema.ts";
import type { ChannelDefinition, WebhookPieces, WebhookRoute } from "./channel.ts";
import { withRoot } from "./channel-account.ts";
import { channelDefinitions } from "./registry.ts";

/** One served path: the channel that owns it and the account it belongs to. */
export interface WebhookTableEntry {
  definition: ChannelDefinition;
  webhook: WebhookPieces;
  route: WebhookRoute;
}

const tables = new WeakMap<EdgeclawConfig, Map<string, WebhookTableEntry>>();

/**
 * path → channel + account, for every registered channel's webhook routes in this config. Pure
 * config reading (the Worker's generic handler and the `npm run dev` banner share it), cached per
 * config object. A path already taken — by another account or another channel — is not served a
 * second time: the first keeps it and the clash is logged once per config.
 */
export function webhookRouteTable(config: EdgeclawConfig): Map<string, WebhookTableEntry> {
  let table = tables.get(config);
  if (table) return table;
  table = new Map();
  for (const definition of channelDefinitions()) {
    const webhook = definition.webhook;
    if (!webhook) continue;
    for (const route of withRoot(definition, config, (root) => webhook.routes(root))) {
      const taken = table.get(route.path);
      if (taken) {
        console.error(
          `channels.${definition.id}: account ${route.accountId} reuses path ${route.path} (taken by ${taken.route.label}); not served`,
        );
        continue;
      }
      table.set(route.path, { definition, webhook, route });
    }
  }
  tables.set(config, table);
  return table;
}
