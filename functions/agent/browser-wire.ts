import type { SsrfPolicy } from "../http/ssrf.ts";

/**
 * What the main Worker's `browser` tool (functions/agent/tools/browser.ts) and the browser Worker
 * (workers/browser/) say to each other over the `BROWSER_WORKER` service binding. The browser
 * Worker has no config of its own: each call carries the settings in force for it.
 */

export const BROWSER_ACTIONS = [
  "status",
  "start",
  "stop",
  "tabs",
  "open",
  "focus",
  "close",
  "navigate",
  "snapshot",
  "act",
  "screenshot",
  "read",
  "console",
] as const;
export type BrowserAction = (typeof BROWSER_ACTIONS)[number];

export const ACT_KINDS = [
  "click",
  "type",
  "press",
  "hover",
  "select",
  "fill",
  "wait",
  "evaluate",
] as const;
export type ActKind = (typeof ACT_KINDS)[number];

/** Actions that change nothing: repeated after an interruption, where the others are not. */
export const READ_ONLY_ACTIONS: ReadonlySet<BrowserAction> = new Set([
  "status",
  "tabs",
  "snapshot",
  "screenshot",
  "read",
  "console",
]);

export interface BrowserSettings {
  ssrfPolicy: SsrfPolicy;
  dnsResolverUrl: string;
  evaluateEnabled: boolean;
  keepAliveMs: number;
  idleMs: number;
  tabCleanup: boolean;
  maxSnapshotChars: number;
  actionTimeoutMs: number;
  maxTabs: number;
  /** Browser time the session may use per UTC day, in ms; 0 = no cap. */
  maxMsPerDay: number;
  snapshotMode: "efficient" | "full";
}

/** The model's arguments, already validated by the tool. */
export interface BrowserArgs {
  action: BrowserAction;
  url?: string;
  targetId?: string;
  ref?: string;
  kind?: ActKind;
  text?: string;
  key?: string;
  values?: string[];
  fields?: Array<{ ref: string; value: string }>;
  submit?: boolean;
  timeMs?: number;
  textGone?: string;
  fn?: string;
  fullPage?: boolean;
  mode?: "efficient" | "full";
  level?: string;
}

export interface BrowserCall {
  /** The session the browser belongs to: one browser Durable Object per agent + session key. */
  agentId: string;
  sessionKey: string;
  /** Keys the call: a call seen before answers what it answered then, and is never run twice. */
  toolCallId: string;
  args: BrowserArgs;
  settings: BrowserSettings;
}

export interface BrowserReply {
  /** For the model; page text inside it is already fenced as untrusted. */
  text: string;
  isError?: boolean;
  /** A screenshot's bytes, for the caller to put in the media store (never kept by the browser Worker). */
  image?: { bytes: Uint8Array; mimeType: string };
  /** Browser time this call used, in ms (metered by the caller). */
  browserMs: number;
  /** The call had run before (a resumed run asking again): this is what it answered then. */
  replayed?: boolean;
}

/** The browser Worker's RPC surface (its `BrowserService` entrypoint). */
export interface BrowserServiceRpc {
  call(call: BrowserCall): Promise<BrowserReply>;
}
