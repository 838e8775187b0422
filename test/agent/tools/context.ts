import { env } from "cloudflare:test";
import { parseConfig } from "../../../functions/channels/gateway-config.ts";
import type { ToolContext } from "../../../functions/agent/types.ts";

/** A tool context for one test agent, with a workspace of its own. */
export function toolContext(overrides: Partial<ToolContext> = {}): ToolContext {
  return {
    env: env as unknown as Record<string, unknown>,
    config: parseConfig({}),
    agentId: `tools-${crypto.randomUUID().slice(0, 8)}`,
    sessionKey: "agent:main:main",
    sessionId: "session-1",
    senderIsOwner: true,
    mainPrivateSession: true,
    status: async () => ({
      sessionKey: "agent:main:main",
      model: "fakeanthropic/claude-test",
      inputTokens: 12,
    }),
    ...overrides,
  };
}

export function fakeWebUrl(): string {
  const url = (env as unknown as Record<string, unknown>).FAKE_WEB_URL;
  if (typeof url !== "string")
    throw new Error(
      "FAKE_WEB_URL binding missing (test/setup/global.ts starts the fake web server)",
    );
  return url;
}
