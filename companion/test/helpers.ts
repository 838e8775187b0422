import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { settingsFromEnv, type CompanionSettings } from "../src/settings.ts";
import type { Log } from "../src/companion.ts";

export const KEY = { id: "kc", secret: "companion-test-ingress-secret" };
export const OUTBOUND = { id: "kc", secret: "companion-test-outbound-secret" };
export const BOT_TOKEN = "7000000099:companion-test-token";
export const BOT_ID = "7000000099";

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), "edgeclaw-companion-"));
}

export function companionEnv(
  workerUrl: string,
  dataDir: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    EDGECLAW_WORKER_URL: workerUrl,
    EDGECLAW_COMPANION_KEY_ID: KEY.id,
    EDGECLAW_COMPANION_INGRESS_SECRET: KEY.secret,
    EDGECLAW_COMPANION_OUTBOUND_SECRET: OUTBOUND.secret,
    EDGECLAW_COMPANION_PORT: "0",
    EDGECLAW_COMPANION_DATA_DIR: dataDir,
    EDGECLAW_COMPANION_STATUS_INTERVAL_MS: "200",
    EDGECLAW_COMPANION_RETRY_MAX_MS: "200",
    EDGECLAW_COMPANION_DRAIN_MS: "2000",
    TG_TOKEN: BOT_TOKEN,
    ...extra,
  };
}

export function settings(env: Record<string, string>): CompanionSettings {
  return settingsFromEnv(env);
}

export const quietLog: Log = (level, message, fields) => {
  if (process.env.COMPANION_TEST_LOG) console.log(level, message, fields ?? "");
};

export async function until<T>(
  probe: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 10_000,
  what = "condition",
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export function telegramAccount(apiRoot: string) {
  return {
    channel: "telegram",
    accountId: "poll",
    label: "Telegram",
    settings: { apiRoot, pollTimeoutSeconds: 1 },
    secretEnv: { botToken: "TG_TOKEN" },
  };
}

let nextUpdateId = 500_000;
export function update(text: string) {
  nextUpdateId += 1;
  return {
    update_id: nextUpdateId,
    message: {
      message_id: nextUpdateId,
      date: 0,
      chat: { id: 4242, type: "private" },
      from: { id: 4242, is_bot: false, first_name: "Ada" },
      text,
    },
  };
}

export async function pushUpdates(
  telegramUrl: string,
  updates: unknown[],
  botId = BOT_ID,
): Promise<void> {
  await fetch(`${telegramUrl}/_control/updates`, {
    method: "POST",
    body: JSON.stringify({ botId, updates }),
  });
}

export async function pollState(
  telegramUrl: string,
  botId = BOT_ID,
): Promise<{ pending: Array<{ update_id: number }>; confirmedOffset: number }> {
  return (await (await fetch(`${telegramUrl}/_control/updates?bot_id=${botId}`)).json()) as {
    pending: Array<{ update_id: number }>;
    confirmedOffset: number;
  };
}
