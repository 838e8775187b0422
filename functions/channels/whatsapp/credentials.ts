import { accountKey, type AccountRequirements } from "../credentials.ts";
import { whatsappAccounts, type WhatsAppChannelConfig } from "./config.ts";

/**
 * WhatsApp takes no secret from the config: the account is a linked device (QR code or pairing
 * code, `npx edgeclaw channels whatsapp link`), and the session the link creates is kept in the
 * Worker's companion state. What a reply needs beyond that is the companion itself
 * (`companion.url`, `companion.outboundKeys`), which the companion's own checks name.
 */
export function whatsappRequirements(root: WhatsAppChannelConfig): AccountRequirements[] {
  return whatsappAccounts(root).map((account) => ({
    accountId: account.accountId,
    key: accountKey("whatsapp", root, account.accountId),
    needs: [],
  }));
}
