import type { InboundEnvelope } from "../../core/envelope.ts";
import { isOperatorChannel } from "../../core/operator-channels.ts";

/**
 * What one companion ingress key may claim. A valid signature proves who sent the request, not what
 * it may say: a key speaks only for the channels listed with it (`companion.ingressKeys[].channels`)
 * and, when `accounts` is listed, only for those accounts of them,
 * and every field that picks a session, a reply path or an identity must stay inside that channel —
 * otherwise a leaked key for one socket channel could post as the operator (webchat/openai), answer
 * through another channel's bot, write into another channel's session, or pre-empt another channel's
 * events by taking their dedup keys in a shared (`dmScope: "main"`) session.
 */
export interface IngressKeyGrant {
  id: string;
  channels: readonly string[];
  /** Account ids the key may speak for; absent = every account of its channels. */
  accounts?: readonly string[];
}

export type IngressAuthorization = { ok: true } | { ok: false; reason: string };

export function authorizeIngressEnvelope(
  key: IngressKeyGrant,
  envelope: InboundEnvelope,
): IngressAuthorization {
  const { channel } = envelope;
  // Checked before the key's list, so no configuration path can ever admit these.
  if (isOperatorChannel(channel))
    return refuse(
      `channel "${channel}" is the operator's own and never comes through the internal ingress`,
    );
  if (key.channels.length === 0) {
    return refuse(
      `ingress key "${key.id}" speaks for no channel: list the companion's channels in companion.ingressKeys[].channels (e.g. ["discord"])`,
    );
  }
  if (!key.channels.includes(channel))
    return refuse(
      `ingress key "${key.id}" may not speak for channel "${channel}" (it may for: ${key.channels.join(", ")})`,
    );
  if (envelope.route.channel !== channel)
    return refuse(`route.channel "${envelope.route.channel}" differs from channel "${channel}"`);
  // Per account too: one Discord bot's key must not post as another bot (another account) of the same channel.
  const { accountId } = envelope; // "default" when the companion left it out
  if (key.accounts && !key.accounts.includes(accountId)) {
    return refuse(
      `ingress key "${key.id}" may not speak for account "${accountId}" (it may for: ${key.accounts.join(", ")})`,
    );
  }
  if (envelope.route.accountId !== envelope.accountId)
    return refuse(
      `route.accountId "${envelope.route.accountId}" differs from accountId "${envelope.accountId}"`,
    );
  const prefix = `${channel}:`;
  // Every key the SessionDO looks up or stores (a delivery key too: a twin may be stored under it).
  const keys = [envelope.dedupKey, ...(envelope.aliasKeys ?? [])];
  if (envelope.deliveryKey !== undefined) keys.push(envelope.deliveryKey);
  for (const dedupKey of keys) {
    if (!dedupKey.startsWith(prefix))
      return refuse(`dedup key "${dedupKey}" must start with "${prefix}"`);
  }
  if (
    envelope.sessionScope !== undefined &&
    !envelope.sessionScope.toLowerCase().startsWith(prefix)
  ) {
    return refuse(`sessionScope "${envelope.sessionScope}" must start with "${prefix}"`);
  }
  return { ok: true };
}

function refuse(reason: string): IngressAuthorization {
  return { ok: false, reason };
}

/**
 * Whether a key may speak for one account of one channel at all (the socket endpoints: accounts,
 * events, state). The same rules as for an envelope: never an operator channel, only the key's
 * channels, and only its accounts when it lists them.
 */
export function authorizeSocketAccount(
  key: IngressKeyGrant,
  channel: string,
  accountId: string,
): IngressAuthorization {
  if (isOperatorChannel(channel))
    return refuse(
      `channel "${channel}" is the operator's own and never comes through the companion`,
    );
  if (!key.channels.includes(channel))
    return refuse(`ingress key "${key.id}" may not speak for channel "${channel}"`);
  if (key.accounts && !key.accounts.includes(accountId))
    return refuse(
      `ingress key "${key.id}" may not speak for account "${accountId}" of "${channel}"`,
    );
  return { ok: true };
}
