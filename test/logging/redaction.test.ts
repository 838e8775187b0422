import { afterEach, describe, expect, it, vi } from "vitest";
import { parseConfig } from "../../functions/channels/gateway-config.ts";
import { createLogger } from "../../functions/logging/logger.ts";

/**
 * Structured logs: one JSON object per line with level, msg, run id and session key; configured
 * secrets, token-shaped strings and (by default) message text never reach the console, even when
 * they arrive inside an error's message.
 */
const BOT_TOKEN = "xoxb-live-4242-9911-AbCdEfGhIjKlMnOp";
const SIGNING = "3f1e0c9a7b5d4e2f1a0b9c8d7e6f5a4b";
const USER_TEXT = "my card pin is 4242, please remember it";

function captured(): { lines: () => Array<Record<string, unknown>>; raw: () => string } {
  const out: string[] = [];
  for (const method of ["log", "warn", "error"] as const)
    vi.spyOn(console, method).mockImplementation(
      (...args: unknown[]) => void out.push(args.map(String).join(" ")),
    );
  return {
    lines: () => out.map((line) => JSON.parse(line) as Record<string, unknown>),
    raw: () => out.join("\n"),
  };
}

afterEach(() => vi.restoreAllMocks());

function config(logging: Record<string, unknown> = {}) {
  return parseConfig({
    channels: {
      slack: {
        botToken: { source: "env", id: "SLACK_BOT_TOKEN_LIVE" },
        signingSecret: { source: "env", id: "SLACK_SIGNING_LIVE" },
      },
    },
    logging,
  });
}
const env = { SLACK_BOT_TOKEN_LIVE: BOT_TOKEN, SLACK_SIGNING_LIVE: SIGNING };

describe("structured logs", () => {
  it("writes one JSON object per line with level, msg, runId and sessionKey", () => {
    const out = captured();
    createLogger(config(), env, { sessionKey: "agent:main:slack:direct:u1" })
      .child({ runId: "run-1" })
      .warn("model call failed", { attempt: 2 });
    const [line] = out.lines();
    expect(line).toMatchObject({
      level: "warn",
      msg: "model call failed",
      runId: "run-1",
      sessionKey: "agent:main:slack:direct:u1",
      attempt: 2,
    });
    expect(typeof line!.time).toBe("string");
  });

  it("masks a configured bot token and signing secret inside an error, and the event's text", () => {
    const out = captured();
    const error = new Error(
      `Slack said invalid_auth for ${BOT_TOKEN} (signing ${SIGNING}) while posting "${USER_TEXT}"`,
    );
    createLogger(config(), env, { sessionKey: "s" }, [USER_TEXT]).error(
      `send failed: ${error.message}`,
      { error, text: USER_TEXT, nested: { content: USER_TEXT } },
    );
    const raw = out.raw();
    expect(raw).not.toContain(BOT_TOKEN);
    expect(raw).not.toContain(SIGNING);
    expect(raw).not.toContain(USER_TEXT);
    expect(raw).toContain("xoxb-l…MnOp");
    expect(raw).toContain("[message text,");
  });

  it("masks secrets it was not told about when they look like credentials", () => {
    const out = captured();
    createLogger(config(), {}).error("provider said", {
      detail:
        "Authorization: Bearer sk-ant-api03-abcdefghijklmnop and postgres://app:hunter2hunter2@db.example/edge api_key=zzzzzzzzzz",
    });
    const raw = out.raw();
    for (const secret of ["sk-ant-api03-abcdefghijklmnop", "hunter2hunter2", "zzzzzzzzzz"])
      expect(raw).not.toContain(secret);
  });

  it('keeps message text with logging.redactSensitive "off", but never a secret', () => {
    const out = captured();
    createLogger(config({ redactSensitive: "off" }), env, {}, [USER_TEXT]).error(
      `failed on "${USER_TEXT}" with ${BOT_TOKEN}`,
      { text: USER_TEXT },
    );
    const raw = out.raw();
    expect(raw).toContain(USER_TEXT);
    expect(raw).not.toContain(BOT_TOKEN);
  });

  it("drops lines below logging.level and applies logging.redactPatterns", () => {
    const out = captured();
    const logger = createLogger(
      config({ level: "warn", redactPatterns: ["ticket-[0-9]{6}"] }),
      env,
    );
    logger.info("hidden");
    logger.warn("seen ticket-123456");
    expect(out.lines().map((line) => line.msg)).toEqual(["seen ***"]);
  });
});
