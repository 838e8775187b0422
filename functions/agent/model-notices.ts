import type { ModelErrorKind } from "./types.ts";

/**
 * OpenClaw's fallback status notices (concepts/model-failover). They are run messages, not
 * assistant content: sent once per state change, never stored in the transcript or spoken by TTS.
 */

export function modelFallbackNotice(
  active: string,
  selected: string,
  reason: ModelErrorKind | string,
): string {
  return `↪️ Model Fallback: ${active} (selected ${selected}; ${reason})`;
}

export function modelFallbackClearedNotice(primary: string, previousFallback: string): string {
  return `↪️ Model Fallback cleared: ${primary} (was ${previousFallback})`;
}
