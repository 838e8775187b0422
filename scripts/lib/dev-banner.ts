import { accountProblemLines } from "../../functions/channels/credential-check.ts";
import { webhookEndpoints } from "../../functions/channels/webhook-endpoints.ts";
import type { EdgeclawConfig } from "../../functions/config/schema.ts";
import type { GatewayAuthForDev } from "./gateway-token.ts";
import { activeModelLine } from "./model-status.ts";

export interface DevBannerInput {
  url: string;
  /** What is bundled (config file, workspace seeds). */
  summary: string;
  dataDir: string;
  config: EdgeclawConfig;
  /** The secrets the Worker gets (to tell which model answers). */
  vars: Record<string, string>;
  auth: GatewayAuthForDev;
  /** Socket accounts: the companion's key, and the process dev started (none with EDGECLAW_DEV_COMPANION=0 or a failed build). */
  companion?: {
    accounts: string[];
    /** None when it serves only the exec sandbox. */
    key?: { id: string; source: "configured" | "generated"; file?: string };
    /** The agents whose exec runs on it (agents.*.sandbox.backend "companion"). */
    sandbox?: { agents: string[]; outboundKey: { id: string; source: string; file?: string } };
    running?: { url: string; pid: number };
  };
  /** The browser's line (lib/dev-browser.ts): where it runs, or why it is off and how to get it. */
  browser?: string;
}

/**
 * What `npm run dev` prints once /health answers: where everything is (web chat, OpenAI API, every
 * channel's webhook URL), how to authenticate, which model answers, and every enabled channel
 * account that lacks a credential or is not served.
 */
export function devReadyBanner(input: DevBannerInput): string[] {
  const { url, auth, config } = input;
  const lines = [`edgeclaw ready on ${url}`, `  ${input.summary}; data in ${input.dataDir}`];
  const model = activeModelLine(config, input.vars);
  if (model.startsWith("  ")) lines.push(model);

  if (auth.kind === "generated") {
    lines.push(
      `  Gateway token: ${auth.token} (${auth.reused ? "kept in" : "generated, saved to"} ${auth.file})`,
    );
    lines.push(`  Web chat: ${url}/#token=${auth.token}`);
  } else {
    if (auth.kind === "configured") lines.push(`  Gateway token: the one set in ${auth.source}`);
    else if (auth.kind === "password")
      lines.push(`  Gateway password: the one set in ${auth.source}`);
    else lines.push("  Gateway auth is off (gateway.auth.mode: none)");
    lines.push(`  Web chat: ${url}/`);
  }
  if (config.gateway.http.endpoints.chatCompletions.enabled) {
    lines.push(
      `  OpenAI API: ${url}/v1/chat/completions${auth.kind === "none" ? "" : " (Authorization: Bearer <gateway token>)"}`,
    );
  }
  for (const endpoint of webhookEndpoints(config))
    lines.push(`  ${endpoint.label}: ${url}${endpoint.path}`);
  // A channel that cannot work is said here, not only by the 401 of its first request.
  for (const problem of accountProblemLines(
    config,
    input.vars,
    "set in .dev.vars or the shell, then restart (EDGECLAW_SIMULATE=1 tries the channel with test secrets)",
  ))
    lines.push(`  ${problem}`);
  if (input.browser) lines.push(input.browser);
  const { companion } = input;
  if (companion) {
    const keys: string[] = [];
    if (companion.key)
      keys.push(
        companion.key.source === "generated"
          ? `generated ingress key "${companion.key.id}", secret in ${companion.key.file}`
          : `ingress key "${companion.key.id}" from the config`,
      );
    const sandbox = companion.sandbox;
    if (sandbox)
      keys.push(
        sandbox.outboundKey.source === "generated"
          ? `generated outbound key "${sandbox.outboundKey.id}", secret in ${sandbox.outboundKey.file}`
          : `outbound key "${sandbox.outboundKey.id}" from the config`,
      );
    const serves = [
      ...companion.accounts,
      ...(sandbox ? [`exec sandbox (bubblewrap) for ${sandbox.agents.join(", ")}`] : []),
    ].join(", ");
    const where = companion.accounts.length ? `; connector state on ${url}/control (Channels)` : "";
    if (companion.running)
      lines.push(
        `  Companion: ${serves} on ${companion.running.url} (pid ${companion.running.pid}; ${keys.join("; ")})${where}`,
      );
    else
      lines.push(
        `  Companion: not started for ${serves}; run one with EDGECLAW_WORKER_URL=${url} and ${keys.join("; ")}${where}`,
      );
  }
  // Said last and unindented: it is the one line a new user must act on.
  if (!model.startsWith("  ")) lines.push(model);
  return lines;
}
