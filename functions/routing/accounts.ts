import * as z from "zod";
import type { EdgeclawConfig } from "../config/schema.ts";
import { DEFAULT_ACCOUNT_ID, normalizeAccountId } from "./ids.ts";

const channelAccountsView = z
  .object({
    defaultAccount: z.string().optional(),
    accounts: z.record(z.string(), z.unknown()).optional(),
  })
  .loose();

/**
 * The account an unqualified binding (no `accountId`) matches: `channels.<ch>.defaultAccount`, else
 * `default` when there is one (or no accounts block at all), else the first account id in sort order.
 */
export function defaultAccountId(config: EdgeclawConfig, channel: string): string {
  const parsed = channelAccountsView.safeParse(config.channels[channel] ?? {});
  if (!parsed.success) return DEFAULT_ACCOUNT_ID;
  if (parsed.data.defaultAccount) return normalizeAccountId(parsed.data.defaultAccount);
  const ids = Object.keys(parsed.data.accounts ?? {})
    .map(normalizeAccountId)
    .sort();
  if (ids.length === 0 || ids.includes(DEFAULT_ACCOUNT_ID)) return DEFAULT_ACCOUNT_ID;
  return ids[0]!;
}
