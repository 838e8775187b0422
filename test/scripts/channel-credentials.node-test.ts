import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseConfig } from "../../functions/channels/gateway-config.ts";
import {
  channelSecretNames,
  describeMissing,
  missingCredentials,
} from "../../functions/channels/credential-check.ts";
import { channelDefinitions } from "../../functions/channels/registry.ts";
import { discordAccount, discordBotToken } from "../../functions/channels/discord/config.ts";
import { feishuAccount, feishuSecrets } from "../../functions/channels/feishu/config.ts";
import {
  googleChatAccount,
  googleChatServiceAccount,
} from "../../functions/channels/googlechat/config.ts";
import { lineAccount, lineSecrets } from "../../functions/channels/line/config.ts";
import {
  mattermostAccount,
  mattermostBaseUrl,
  mattermostBotToken,
} from "../../functions/channels/mattermost/config.ts";
import {
  matrixAccessToken,
  matrixAccount,
  matrixHomeserver,
} from "../../functions/channels/matrix/config.ts";
import { signalAccount, signalNumber } from "../../functions/channels/signal/config.ts";
import { msTeamsAccount, msTeamsCredentials } from "../../functions/channels/msteams/config.ts";
import { slackAccount, slackSecrets } from "../../functions/channels/slack/config.ts";
import { smsAccount, smsSecrets } from "../../functions/channels/sms/config.ts";
import { telegramAccount, telegramSecrets } from "../../functions/channels/telegram/config.ts";
import { whatsappAccount } from "../../functions/channels/whatsapp/config.ts";
import {
  whatsappCloudAccount,
  whatsappCloudSecrets,
} from "../../functions/channels/whatsappcloud/config.ts";
import { checkConfig } from "../../functions/routing/config-check.ts";
import { requiredSecrets } from "../../functions/control/required-secrets.ts";
import type { EdgeclawConfig } from "../../functions/config/schema.ts";
import { channelRoot } from "../../functions/channels/channel-account.ts";

/** `channels.<id>` as the gateway parsed it, for the channel's own account resolver. */
const root = <Block>(config: EdgeclawConfig, channel: string): Block =>
  channelRoot(config, channel) as Block;

/**
 * One list of what each channel account needs (functions/channels/<id>/credentials.ts), env
 * fallbacks included: a channel block with no credentials is named by config check and deploy's
 * secret list, and the list is the truth — setting exactly the names it gives makes the channel's
 * own resolver find every credential.
 */
const SERVICE_ACCOUNT = JSON.stringify({
  client_email: "bot@example.iam.gserviceaccount.com",
  private_key: "-----BEGIN PRIVATE KEY-----\nx\n-----END PRIVATE KEY-----\n",
});

interface Case {
  block: Record<string, unknown>;
  /** The env names a block without credentials is missing, first choice of each need (the documented fallbacks). */
  missing: string[];
  /** Every credential the channel's own code reads, given `env`. */
  resolved(config: EdgeclawConfig, env: Record<string, string>): unknown[];
}

const CASES: Record<string, Case> = {
  slack: {
    block: {},
    missing: ["SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET"],
    resolved: (c, env) =>
      Object.values(slackSecrets(slackAccount(root(c, "slack"), "default"), env)),
  },
  telegram: {
    block: {},
    missing: ["TELEGRAM_BOT_TOKEN", "TELEGRAM_WEBHOOK_SECRET"],
    resolved: (c, env) =>
      Object.values(telegramSecrets(telegramAccount(root(c, "telegram"), "default"), env)),
  },
  sms: {
    block: {},
    missing: ["TWILIO_AUTH_TOKEN", "TWILIO_ACCOUNT_SID", "TWILIO_PHONE_NUMBER"],
    resolved: (c, env) => {
      const s = smsSecrets(smsAccount(root(c, "sms"), "default"), env);
      return [s.accountSid, s.authToken, s.fromNumber];
    },
  },
  line: {
    block: {},
    missing: ["LINE_CHANNEL_SECRET", "LINE_CHANNEL_ACCESS_TOKEN"],
    resolved: (c, env) => Object.values(lineSecrets(lineAccount(root(c, "line"), "default"), env)),
  },
  googlechat: {
    block: { audienceType: "app-url", audience: "https://bot.example/googlechat" },
    missing: ["GOOGLE_CHAT_SERVICE_ACCOUNT"],
    resolved: (c, env) => {
      const key = googleChatServiceAccount(
        googleChatAccount(root(c, "googlechat"), "default"),
        env,
      );
      return ["key" in key ? key.key : undefined];
    },
  },
  feishu: {
    block: { connectionMode: "webhook" },
    missing: ["FEISHU_APP_ID", "FEISHU_APP_SECRET", "FEISHU_ENCRYPT_KEY"],
    resolved: (c, env) => {
      const s = feishuSecrets(feishuAccount(root(c, "feishu"), "default"), env);
      return [s.appId, s.appSecret, s.encryptKey];
    },
  },
  msteams: {
    block: {},
    missing: ["MSTEAMS_APP_ID", "MSTEAMS_APP_PASSWORD"],
    resolved: (c, env) => {
      const s = msTeamsCredentials(msTeamsAccount(root(c, "msteams"), "default"), env);
      return "error" in s ? [undefined] : [s.appId, s.appPassword];
    },
  },
  discord: {
    block: {},
    missing: ["DISCORD_BOT_TOKEN"],
    resolved: (c, env) => [discordBotToken(discordAccount(root(c, "discord"), "default"), env)],
  },
  mattermost: {
    block: {},
    missing: ["MATTERMOST_URL", "MATTERMOST_BOT_TOKEN"],
    resolved: (c, env) => {
      const account = mattermostAccount(root(c, "mattermost"), "default");
      return [mattermostBaseUrl(account, env), mattermostBotToken(account, env)];
    },
  },
  matrix: {
    block: {},
    missing: ["MATRIX_HOMESERVER", "MATRIX_ACCESS_TOKEN"],
    resolved: (c, env) => {
      const account = matrixAccount(root(c, "matrix"), "default");
      return [matrixHomeserver(account, env), matrixAccessToken(account, env)];
    },
  },
  // A linked device: no secret in the config or the environment (the session is the link's).
  whatsapp: {
    block: {},
    missing: [],
    resolved: (c) => [whatsappAccount(root(c, "whatsapp"), "default").accountId],
  },
  signal: {
    block: {},
    missing: ["SIGNAL_ACCOUNT"],
    resolved: (c, env) => [signalNumber(signalAccount(root(c, "signal"), "default"), env)],
  },
  whatsappcloud: {
    block: {},
    missing: [
      "WHATSAPP_CLOUD_APP_SECRET",
      "WHATSAPP_CLOUD_VERIFY_TOKEN",
      "WHATSAPP_CLOUD_ACCESS_TOKEN",
      "WHATSAPP_CLOUD_PHONE_NUMBER_ID",
    ],
    resolved: (c, env) =>
      Object.values(
        whatsappCloudSecrets(whatsappCloudAccount(root(c, "whatsappcloud"), "default"), env),
      ),
  },
};

function valueFor(name: string): string {
  if (name === "GOOGLE_CHAT_SERVICE_ACCOUNT") return SERVICE_ACCOUNT;
  if (name === "MATTERMOST_URL") return "https://chat.example.com";
  if (name === "MATRIX_HOMESERVER") return "https://matrix.example.org";
  if (name === "SIGNAL_ACCOUNT") return "+15551234567";
  if (name === "WHATSAPP_CLOUD_PHONE_NUMBER_ID") return "106540352242922";
  return `value-of-${name}`;
}

describe("channel credentials: one list per channel", () => {
  it("every built-in channel has a case here (a new channel declares its list and is checked)", () => {
    const ids = channelDefinitions()
      .map((definition) => definition.id)
      .filter((id) => id !== "relay");
    assert.deepEqual(ids.sort(), Object.keys(CASES).sort());
  });

  for (const [channel, testCase] of Object.entries(CASES)) {
    it(`${channel}: a block without credentials names ${testCase.missing.join(", ")}; setting exactly those lets the channel read every credential`, () => {
      const raw = { channels: { [channel]: testCase.block } };
      const config = parseConfig(raw);
      const missing = missingCredentials(config, {});
      assert.deepEqual(
        missing.map((entry) => entry.env[0]),
        testCase.missing,
      );
      // The same names in config check, deploy's secret list (and the control page, which reads it).
      const warnings = checkConfig(raw, {}).warnings;
      for (const name of testCase.missing)
        assert.ok(
          warnings.some((w) => w.startsWith(`channels.${channel}: no `) && w.includes(name)),
          `config check does not name ${name}:\n${warnings.join("\n")}`,
        );
      const deployList = requiredSecrets(config, raw).map((secret) => secret.name);
      for (const name of testCase.missing) assert.ok(deployList.includes(name), deployList.join());

      const env = Object.fromEntries(testCase.missing.map((name) => [name, valueFor(name)]));
      assert.deepEqual(missingCredentials(config, env), []);
      const resolved = testCase.resolved(config, env);
      assert.ok(
        resolved.every((value) => value !== undefined),
        `${channel} did not read a credential from ${Object.keys(env).join(", ")}: ${JSON.stringify(resolved)}`,
      );
      assert.ok(
        !checkConfig(raw, env).warnings.some((w) => w.startsWith(`channels.${channel}: no `)),
      );
    });
  }
});

describe("channel credentials: where each one comes from", () => {
  it("a SecretRef names its own variable, a literal needs none, a second account gets no fallback", () => {
    const config = parseConfig({
      channels: {
        line: {
          channelSecret: { source: "env", id: "MY_LINE_SECRET" },
          channelAccessToken: "literal-token-in-the-config",
          accounts: { default: {}, biz: { channelSecret: "${BIZ_SECRET}" } },
        },
      },
    });
    const missing = missingCredentials(config, {}).map(describeMissing);
    assert.deepEqual(missing, [
      "channels.line.accounts.default: no channel secret (MY_LINE_SECRET is not set, nor channels.line.channelSecret): every LINE webhook is refused (401)",
      "channels.line.accounts.biz: no channel secret (BIZ_SECRET is not set, nor channels.line.accounts.biz.channelSecret): every LINE webhook is refused (401)",
    ]);
    assert.deepEqual(
      channelSecretNames(config).map((entry) => entry.name),
      ["MY_LINE_SECRET", "BIZ_SECRET"],
    );
  });

  it("an account of its own with nothing set can only be fixed in the config: it names the key", () => {
    const config = parseConfig({ channels: { discord: { accounts: { work: {} } } } });
    assert.deepEqual(missingCredentials(config, { DISCORD_BOT_TOKEN: "x" }).map(describeMissing), [
      "channels.discord.accounts.work: no bot token (set channels.discord.accounts.work.token): the companion cannot connect and replies cannot be sent",
    ]);
  });

  it("either of two alternatives is enough, and deploy's list says so", () => {
    const raw = { channels: { feishu: { connectionMode: "webhook" } } };
    const config = parseConfig(raw);
    const env = { FEISHU_APP_ID: "a", FEISHU_APP_SECRET: "b" };
    assert.match(
      missingCredentials(config, env).map(describeMissing).join("\n"),
      /none of FEISHU_ENCRYPT_KEY, FEISHU_VERIFICATION_TOKEN is set/,
    );
    assert.deepEqual(missingCredentials(config, { ...env, FEISHU_VERIFICATION_TOKEN: "c" }), []);
    const listed = requiredSecrets(config, raw).find((s) => s.name === "FEISHU_ENCRYPT_KEY");
    assert.deepEqual(listed?.alternatives, ["FEISHU_VERIFICATION_TOKEN"]);
    assert.match(listed?.why ?? "", /or FEISHU_VERIFICATION_TOKEN instead/);
  });

  it("a disabled channel or account needs nothing", () => {
    const config = parseConfig({
      channels: { line: { enabled: false }, slack: { accounts: { a: { enabled: false } } } },
    });
    assert.deepEqual(missingCredentials(config, {}), []);
  });
});
