/**
 * A device link a companion connector waits for or holds (WhatsApp's linked device), as the
 * companion reports it with its status: what a person has to do, shown by the control page and by
 * `edgeclaw channels whatsapp link`. One shape for the companion that sends it, the Worker that
 * stores and serves it, and the CLI that reads it. `qrModules` is the QR code already encoded, one
 * string of 0/1 per row (1 = dark), so neither reader needs a QR encoder.
 */
export interface DeviceLink {
  state: string;
  qr?: string;
  qrModules?: string[];
  /** Unix ms after which the QR code is replaced by the next one. */
  expiresAt?: number;
  pairingCode?: string;
  /** The linked account (its JID), once linked. */
  me?: string;
  /** Unix ms of the next connection attempt while reconnecting. */
  retryAt?: number;
  reason?: string;
}
