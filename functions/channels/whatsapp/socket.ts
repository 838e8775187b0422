import type { SocketAccount, SocketPieces } from "../channel.ts";
import { parsePayload } from "../parse-json-body.ts";
import { whatsappAccounts, type WhatsAppAccount, type WhatsAppChannelConfig } from "./config.ts";
import { parseWhatsAppEvent } from "./parse.ts";
import { whatsappSocketPayloadSchema } from "./payloads.ts";

/**
 * Every enabled WhatsApp account is one linked device the companion runs with Baileys
 * (functions/channels/whatsapp/companion/connector.ts). No secret travels: the device is linked by
 * QR code or pairing code, and its session lives in the Worker's companion state. The connector
 * gets what changes its own behaviour (the pairing-code number, whether to mark messages read);
 * events come back as Baileys emitted them and are parsed here (parse.ts).
 */
export const whatsappSocket: SocketPieces<WhatsAppAccount, WhatsAppChannelConfig> = {
  repliesThroughCompanion: true,
  accounts(root) {
    const accounts = whatsappAccounts(root);
    return accounts.map(
      (account): SocketAccount<WhatsAppAccount> => ({
        accountId: account.accountId,
        label: accounts.length > 1 ? `WhatsApp (account ${account.accountId})` : "WhatsApp",
        account,
        connector: {
          settings: {
            ...(account.pairingPhoneNumber
              ? { pairingPhoneNumber: account.pairingPhoneNumber }
              : {}),
            selfChatMode: account.selfChatMode,
          },
          secretEnv: {},
        },
      }),
    );
  },
  parse(event, socketAccount) {
    const payload = parsePayload(event.payload, whatsappSocketPayloadSchema, "a WhatsApp event");
    if (!payload.ok) return { kind: "malformed", reason: payload.reason };
    return parseWhatsAppEvent({
      ...payload.value,
      account: socketAccount.account,
      receivedAt: event.receivedAt,
    });
  },
};
