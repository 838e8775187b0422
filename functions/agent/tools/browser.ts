import * as z from "zod";
import type { EdgeclawConfig } from "../../config/schema.ts";
import type { AgentTool, ToolContext, ToolResult } from "../types.ts";
import { mediaKey, mediaStoreFor } from "../../media/store.ts";
import type { MediaPart } from "../../media/parts.ts";
import {
  ACT_KINDS,
  BROWSER_ACTIONS,
  type BrowserArgs,
  type BrowserServiceRpc,
  type BrowserSettings,
} from "../browser-wire.ts";
import { ToolInputError, parseToolArgs } from "./common.ts";
import { browserCallOutcome, browserCallStart, browserWorstMs } from "../browser-meter.ts";
import type { MeterTicket } from "../metering.ts";

/**
 * `browser` per OpenClaw's tools/browser: snapshot → ref → act. The browser itself runs in the
 * browser Worker (workers/browser/: Cloudflare Browser Run through @cloudflare/playwright, one
 * Durable Object per session keeping its tabs), reached over the `BROWSER_WORKER` service binding so
 * the main Worker's bundle carries none of it. Offered only while that binding exists and
 * `browser.enabled` is on. Every navigation and every request a page makes passes the SSRF rules of
 * `browser.ssrfPolicy`; page text comes back fenced as untrusted; a screenshot goes to the media
 * store and the model gets its reference.
 */

const browserArgs = z
  .object({
    action: z.enum(BROWSER_ACTIONS),
    url: z.string().min(1).optional(),
    targetId: z.string().min(1).optional(),
    ref: z.string().min(1).optional(),
    kind: z.enum(ACT_KINDS).optional(),
    text: z.string().optional(),
    key: z.string().min(1).optional(),
    values: z.array(z.string()).optional(),
    fields: z.array(z.object({ ref: z.string().min(1), value: z.string() })).optional(),
    submit: z.boolean().optional(),
    timeMs: z.number().int().nonnegative().max(60_000).optional(),
    textGone: z.string().optional(),
    fn: z.string().min(1).optional(),
    fullPage: z.boolean().optional(),
    mode: z.enum(["efficient", "full"]).optional(),
    level: z.string().optional(),
  })
  .superRefine((args, issues) => {
    const need = (field: keyof typeof args, why: string) => {
      if (args[field] === undefined)
        issues.addIssue({ code: "custom", path: [field], message: `required ${why}` });
    };
    if (args.action === "open" || args.action === "navigate") need("url", `for ${args.action}`);
    if (args.action === "focus") need("targetId", "for focus");
    if (args.action === "act") need("kind", "for act");
  });

function settingsOf(config: EdgeclawConfig): BrowserSettings {
  const browser = config.browser;
  return {
    ssrfPolicy: browser.ssrfPolicy,
    dnsResolverUrl: config.tools.web.fetch.dnsResolverUrl,
    evaluateEnabled: browser.evaluateEnabled,
    keepAliveMs: browser.keepAliveSeconds * 1000,
    idleMs: browser.tabCleanup.idleMinutes * 60_000,
    tabCleanup: browser.tabCleanup.enabled,
    maxSnapshotChars: browser.maxSnapshotChars,
    actionTimeoutMs: browser.actionTimeoutSeconds * 1000,
    maxTabs: browser.maxTabs,
    maxMsPerDay: browser.maxSecondsPerSessionDay * 1000,
    snapshotMode: browser.snapshotDefaults.mode ?? "full",
  };
}

function serviceOf(env: Record<string, unknown> | undefined): BrowserServiceRpc | undefined {
  const service = env?.BROWSER_WORKER as Partial<BrowserServiceRpc> | undefined;
  return service && typeof service.call === "function" ? (service as BrowserServiceRpc) : undefined;
}

export function createBrowserTool(
  config: EdgeclawConfig,
  env: Record<string, unknown> | undefined,
): AgentTool | null {
  if (!config.browser.enabled || !serviceOf(env)) return null;
  return {
    name: "browser",
    description:
      "Drive a headless browser that keeps its tabs between calls. Loop: navigate (or open) a URL, read the returned snapshot, then act on elements by their ref (e.g. e5) — click, type, fill, select, press, hover, wait — and snapshot again. Refs change after navigation. Also: status, start, stop, tabs, focus, close, screenshot, read (page text), console. Private and internal addresses are refused.",
    parameters: {
      type: "object",
      properties: {
        action: { type: "string", enum: [...BROWSER_ACTIONS] },
        url: { type: "string", description: "open/navigate: the http(s) URL" },
        targetId: {
          type: "string",
          description:
            "The tab: its id from tabs/open, or its position in tabs (1, 2, …); default the current one",
        },
        ref: {
          type: "string",
          description: "act/screenshot: an element ref from the last snapshot",
        },
        kind: { type: "string", enum: [...ACT_KINDS], description: "act: what to do" },
        text: { type: "string", description: "act type: the text; act wait: text to wait for" },
        key: { type: "string", description: "act press: a key such as Enter or Control+A" },
        values: {
          type: "array",
          items: { type: "string" },
          description: "act select: the options",
        },
        fields: {
          type: "array",
          items: {
            type: "object",
            properties: { ref: { type: "string" }, value: { type: "string" } },
            required: ["ref", "value"],
          },
          description: "act fill: several fields at once",
        },
        submit: { type: "boolean", description: "act type: press Enter afterwards" },
        timeMs: { type: "integer", description: "act wait: milliseconds to wait" },
        textGone: { type: "string", description: "act wait: text to wait to disappear" },
        fn: { type: "string", description: "act evaluate: a JavaScript function source" },
        fullPage: { type: "boolean", description: "screenshot: the whole page" },
        mode: {
          type: "string",
          enum: ["efficient", "full"],
          description: "snapshot: efficient = interactive elements only",
        },
        level: { type: "string", description: "console: only this level (error, warning, log…)" },
      },
      required: ["action"],
      additionalProperties: false,
    },
    execute: (rawArgs, ctx) =>
      runBrowser(config, parseToolArgs("browser", browserArgs, rawArgs) as BrowserArgs, ctx),
  };
}

async function runBrowser(
  config: EdgeclawConfig,
  args: BrowserArgs,
  ctx: ToolContext,
): Promise<ToolResult> {
  const service = serviceOf(ctx.env);
  if (!service)
    throw new ToolInputError("browser: the browser Worker is not bound (BROWSER_WORKER)");
  const toolCallId = ctx.toolCallId ?? `browser-${crypto.randomUUID()}`;
  const settings = settingsOf(config);
  // Browser time is paid: admitted against the budgets before the browser Worker hears of the call.
  const meter = ctx.meterFor?.("browser");
  const start = browserCallStart(settings, toolCallId);
  let ticket: MeterTicket | undefined;
  try {
    ticket = await meter?.admit(start);
  } catch (error) {
    // A budget with no room (or a budget check that did not answer: no money is spent unchecked).
    const why = error instanceof Error ? error.message : String(error);
    return {
      content: `browser ${args.action}: refused before opening the browser — ${why}`,
      isError: true,
    };
  }
  let reply: Awaited<ReturnType<BrowserServiceRpc["call"]>>;
  try {
    reply = await service.call({
      agentId: ctx.agentId,
      sessionKey: ctx.sessionKey,
      toolCallId,
      args,
      settings,
    });
  } catch (error) {
    // What the browser used is unknown: charged the bound it was admitted for (never free).
    if (meter && ticket)
      await meter.settle(ticket, start, browserCallOutcome(browserWorstMs(settings)));
    throw error;
  }
  if (meter && ticket) await meter.settle(ticket, start, browserCallOutcome(reply.browserMs));
  let text = reply.text;
  let media: MediaPart[] | undefined;
  if (args.action === "screenshot" && !reply.isError) {
    // Keyed by the call, so a resumed run's repeat names the same object and stores nothing again.
    const key = await mediaKey(ctx.agentId, ctx.sessionKey, `browser:${toolCallId}`, 0);
    const store = mediaStoreFor(ctx.env);
    if (reply.image && store) {
      await store.put(key, reply.image.bytes, reply.image.mimeType);
      // A model with image input sees it (media-request.ts); any other reads the key below.
      media = [
        {
          kind: "image",
          ref: key,
          mimeType: reply.image.mimeType,
          sizeBytes: reply.image.bytes.byteLength,
          name: "screenshot",
        },
      ];
    }
    text += store
      ? `\nStored as media ${key}${reply.image ? ` (${reply.image.bytes.byteLength} bytes, ${reply.image.mimeType})` : ""}.`
      : "\nNo media store is bound (MEDIA / MEDIA_DISK), so the image was not kept.";
  }
  text += `\n[browser time ${(reply.browserMs / 1000).toFixed(2)} s${reply.replayed ? "; answered from the record of this call" : ""}]`;
  return reply.isError
    ? { content: text, isError: true }
    : { content: text, ...(media ? { media } : {}) };
}
