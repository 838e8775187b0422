import type { DeviceLink } from "../../companion/device-link.ts";
import type { LinkState } from "./link-state.ts";

/**
 * The link state as the connector reports it (ConnectorStatus.link): the QR code both as Baileys'
 * text and as rows of modules (encoded in the companion by `qrModules`, WaRuntime's, so the
 * control page and the CLI draw it without an encoder of their own), the pairing code, who is
 * linked, why it stopped.
 */
export function linkReport(link: LinkState, qrModules: (text: string) => string[]): DeviceLink {
  switch (link.state) {
    case "awaiting-qr":
      return {
        state: link.state,
        qr: link.qr,
        qrModules: qrModules(link.qr),
        expiresAt: link.expiresAt,
      };
    case "awaiting-pairing-code":
      return { state: link.state, pairingCode: link.pairingCode };
    case "linked":
      return { state: link.state, me: link.me };
    case "reconnecting":
      return { state: link.state, retryAt: link.retryAt, reason: link.reason };
    case "logged-out":
    case "replaced":
      return { state: link.state, reason: link.reason };
    default:
      return { state: link.state };
  }
}
