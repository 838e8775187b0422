import type { SendContext } from "../adapter.ts";
import type { ReplyRoute } from "../../core/envelope.ts";
import { lineAccountForRoute, lineSecrets, type LineAccount } from "./config.ts";

/** The account a reply route belongs to, with its resolved channel access token. */
export interface LineSendTarget {
  account: LineAccount;
  accessToken?: string;
}

export function lineTarget(
  route: ReplyRoute,
  ctx: Pick<SendContext, "config" | "env">,
): LineSendTarget | undefined {
  const found = lineAccountForRoute(ctx.config, route.accountId);
  if (!found) return undefined;
  return { account: found.account, accessToken: lineSecrets(found.account, ctx.env).accessToken };
}
