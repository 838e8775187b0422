import type { SendContext } from "../adapter.ts";
import { lineSecrets, type LineAccount } from "./config.ts";

/** The account a reply route belongs to, with its resolved channel access token. */
export interface LineSendTarget {
  account: LineAccount;
  accessToken?: string;
}

/** The account the pipeline resolved for the call (the route's), with its access token. */
export function lineTarget(
  ctx: Pick<SendContext<LineAccount>, "account" | "env">,
): LineSendTarget | undefined {
  const account = ctx.account;
  return account && { account, accessToken: lineSecrets(account, ctx.env).accessToken };
}
