/**
 * WhatsApp addresses (JIDs) as the Worker reads them, without Baileys: `<user>[:<device>]@<server>`.
 * Users are `…@s.whatsapp.net` (a phone number) or `…@lid` (WhatsApp's privacy id); groups
 * `…@g.us`; `status@broadcast`, `…@broadcast` and `…@newsletter` are not conversations served here.
 */

export interface Jid {
  user: string;
  device?: number;
  server: string;
}

export function parseJid(jid: string): Jid | undefined {
  const at = jid.lastIndexOf("@");
  if (at <= 0) return undefined;
  const server = jid.slice(at + 1);
  const [user, device] = jid.slice(0, at).split(":");
  if (!user || !server) return undefined;
  const deviceNumber = device === undefined ? undefined : Number(device);
  return {
    user: user.split("_")[0]!,
    server,
    ...(Number.isInteger(deviceNumber) ? { device: deviceNumber } : {}),
  };
}

export const isGroupJid = (jid: string) => jid.endsWith("@g.us");
export const isBroadcastJid = (jid: string) =>
  jid.endsWith("@broadcast") || jid.endsWith("@newsletter");
const isPhoneServer = (server: string) => server === "s.whatsapp.net" || server === "c.us";

/** `15551234567:3@s.whatsapp.net` → `+15551234567`; undefined for a LID or a group. */
export function phoneOf(jid: string | null | undefined): string | undefined {
  const parsed = jid ? parseJid(jid) : undefined;
  return parsed && isPhoneServer(parsed.server) && /^\d+$/.test(parsed.user)
    ? `+${parsed.user}`
    : undefined;
}

/** The same user on the same server, whatever the device (`1555:12@s.whatsapp.net` = `1555@s.whatsapp.net`). */
export function sameUser(a: string | null | undefined, b: string | null | undefined): boolean {
  const x = a ? parseJid(a) : undefined;
  const y = b ? parseJid(b) : undefined;
  if (!x || !y || x.user !== y.user) return false;
  return x.server === y.server || (isPhoneServer(x.server) && isPhoneServer(y.server));
}

/**
 * How a person is named in envelopes and allowlists: their E.164 number when one of the two forms
 * Baileys gives is a phone number, else the LID as written without its device.
 */
export function personId(
  primary: string | null | undefined,
  alt: string | null | undefined,
): string | undefined {
  const phone = phoneOf(primary) ?? phoneOf(alt);
  if (phone) return phone;
  const parsed = primary ? parseJid(primary) : undefined;
  return parsed ? `${parsed.user}@${parsed.server}` : undefined;
}
