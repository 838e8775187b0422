/**
 * Pairing codes (channels/pairing): 8 characters, upper case, without the look-alikes 0 O 1 I;
 * valid 1 hour; at most 3 pending per channel account.
 */
export const PAIRING_CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
export const PAIRING_CODE_LENGTH = 8;
export const PAIRING_CODE_TTL_MS = 60 * 60 * 1000;
export const PAIRING_MAX_PENDING_PER_ACCOUNT = 3;

/** 32 symbols, so a byte masked to 5 bits picks one without modulo bias. */
export function generatePairingCode(
  random: (bytes: Uint8Array) => Uint8Array = (b) => crypto.getRandomValues(b),
): string {
  const bytes = random(new Uint8Array(PAIRING_CODE_LENGTH));
  let code = "";
  for (const byte of bytes) code += PAIRING_CODE_ALPHABET[byte & 31];
  return code;
}

const CODE_SHAPE = new RegExp(`^[${PAIRING_CODE_ALPHABET}]{${PAIRING_CODE_LENGTH}}$`);

/** Upper-cases and trims what a person typed; undefined when it cannot be a code at all. */
export function normalizePairingCode(input: string): string | undefined {
  const code = input.trim().toUpperCase();
  return CODE_SHAPE.test(code) ? code : undefined;
}
