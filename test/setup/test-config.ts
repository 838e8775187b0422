/**
 * The edgeclaw.json5 the workerd test suite runs with, pointed at the loopback fakes. It goes to the
 * Worker as the EDGECLAW_CONFIG binding, exactly as `npm run dev` passes a user's config.
 */
import { FAKE_MATTERMOST_BOT } from "../../functions/channels/mattermost/simulate/mattermost-identity.ts";

export interface FakeAddresses {
  [name: string]: string;
}

export function buildTestConfig(fakes: FakeAddresses): Record<string, unknown> {
  return {
    gateway: { auth: { token: "test-gateway-token" } },
    // The signed internal ingress (test/workers/internal-ingress.test.ts): one key, two channels.
    companion: {
      // The sandbox tests' real local backend (test/setup/global.ts starts it): exec over the
      // signed channel Worker → companion (POST /v1/sandbox), as `npm run dev` runs it.
      ...(fakes.sandbox
        ? {
            url: fakes.sandbox,
            outboundKeys: [
              {
                id: TEST_SANDBOX_KEY.id,
                secret: { source: "env", id: "TEST_SANDBOX_OUTBOUND_SECRET" },
              },
            ],
          }
        : {}),
      ingressKeys: [
        {
          id: "k1",
          secret: { source: "env", id: "EDGECLAW_COMPANION_INGRESS_SECRET" },
          channels: ["testchan", "discord", "metricschan"],
        },
        // test/channels/slack/socket.test.ts and test/channels/mattermost/: the Slack Socket Mode and Mattermost connectors' key.
        {
          id: "sockmm",
          secret: { source: "env", id: "TEST_COMPANION_SOCKMM_SECRET" },
          channels: ["slack", "mattermost"],
        },
        // test/workers/companion-api.test.ts: one key for the polling Telegram account only, one for every Telegram account.
        {
          id: "tgpoll",
          secret: { source: "env", id: "TEST_COMPANION_TGPOLL_SECRET" },
          channels: ["telegram"],
          accounts: ["poll"],
          deployment: "tgpoll",
        },
        {
          id: "tgall",
          secret: { source: "env", id: "TEST_COMPANION_TGALL_SECRET" },
          channels: ["telegram"],
        },
      ],
      // test/durable-objects/companion-container-keeper.test.ts: short restart delays so the real alarms fire within the test.
      container: {
        workerUrl: "https://edgeclaw.test",
        restartMinMs: 1000,
        restartMaxMs: 4000,
        crashLoopStops: 3,
        crashLoopWindowMs: 60_000,
      },
    },
    // GET /metrics (test/metrics/): a scrape-only token, and counters handed over without delay.
    diagnostics: {
      metrics: {
        token: { source: "env", id: "TEST_METRICS_TOKEN" },
        coalesceMs: 20,
        flushIntervalMs: 0,
      },
    },
    // Inbound hooks (test/automation/hooks.test.ts): their own token, one mapping with templates.
    hooks: {
      enabled: true,
      token: { source: "env", id: "TEST_HOOKS_TOKEN" },
      mappings: [
        {
          match: { path: "gmail" },
          action: "agent",
          name: "Gmail",
          messageTemplate: "From: {{messages[0].from}}\nSubject: {{messages[0].subject}}",
        },
      ],
    },
    ...(fakes.model ? modelProviders(fakes.model) : {}),
    // memory_search embeds through the fake model server's deterministic /v1/embeddings.
    ...(fakes.model
      ? {
          memory: {
            search: {
              provider: "openai",
              baseUrl: `${fakes.model}/v1`,
              apiKey: "test-embed-key",
              model: "fake-embed",
            },
          },
        }
      : {}),
    // web_fetch refuses loopback; the fake web server's host is the one exception the suite allows.
    // Host names are resolved by the fake DoH resolver, never on the internet.
    ...(fakes.web || fakes.doh
      ? {
          tools: {
            web: {
              fetch: {
                ...(fakes.web
                  ? { ssrfPolicy: { allowedHostnames: [new URL(fakes.web).hostname] } }
                  : {}),
                ...(fakes.doh ? { dnsResolverUrl: `${fakes.doh}/dns-query` } : {}),
              },
            },
          },
        }
      : {}),
    channels: {
      ...(fakes.slack ? { slack: slackTestChannel(fakes.slack) } : {}),
      ...(fakes.line ? { line: lineTestChannel(fakes.line) } : {}),
      ...(fakes.feishu ? { feishu: feishuTestChannel(fakes.feishu) } : {}),
      ...(fakes.twilio ? { sms: smsTestChannel(fakes.twilio) } : {}),
      ...(fakes.telegram ? { telegram: telegramTestChannel(fakes.telegram) } : {}),
      ...(fakes.relay ? { relay: relayTestChannel(fakes.relay) } : {}),
      ...(fakes.googlechat ? { googlechat: googleChatTestChannel(fakes.googlechat) } : {}),
      ...(fakes.msteams ? { msteams: msTeamsTestChannel(fakes.msteams) } : {}),
      ...(fakes.discord ? { discord: discordTestChannel(fakes.discord) } : {}),
      ...(fakes.mattermost ? { mattermost: mattermostTestChannel(fakes.mattermost) } : {}),
    },
  };
}

/**
 * Two providers on the fake model server (test/fakes/model-server.ts), one per wire format. Tests
 * script it per scenario by putting `[scenario:<id>]` in a user message.
 */
export const TEST_PRIMARY_MODEL = "fakeanthropic/claude-test";
export const TEST_OPENAI_MODEL = "fakeopenai/gpt-test";

function modelProviders(fakeModelUrl: string): Record<string, unknown> {
  return {
    agents: {
      defaults: { model: { primary: TEST_PRIMARY_MODEL } },
      // test/sandbox/: an agent whose commands run in the real bubblewrap sandbox, one whose
      // commands run in the sandbox container (SandboxDO over the loopback container engine,
      // test/fakes/container-engine.ts); main has none.
      list: [
        { id: "main", default: true },
        { id: "sandboxed", sandbox: { backend: "companion", mode: "all", scope: "session" } },
        { id: "contained", sandbox: { backend: "container", mode: "all", scope: "session" } },
        // test/sandbox/approvals.test.ts: its own approval policy (agents.list[].tools.exec).
        {
          id: "asker",
          sandbox: { backend: "companion", mode: "all", scope: "session" },
          tools: { exec: { mode: "ask", allowlist: ["ls"] } },
        },
        // test/compute-env/: AcaClaw's computing environment over the conda stand-in bound at
        // /opt/conda in the bubblewrap sandbox (test/fakes/conda/), its fixture channel only.
        {
          id: "scientist",
          sandbox: { backend: "companion", mode: "all", scope: "agent" },
          computeEnv: { enabled: true, channels: ["file:///opt/conda/channel"] },
        },
        // test/sandbox/budget.test.ts: 2 s of sandbox time a day (budgets.agents.metered).
        { id: "metered", sandbox: { backend: "companion", mode: "all", scope: "session" } },
      ],
    },
    budgets: { agents: { metered: { day: { sandboxSeconds: 2 } } } },
    models: {
      providers: {
        fakeanthropic: {
          baseUrl: fakeModelUrl,
          apiKey: "test-anthropic-key",
          api: "anthropic-messages",
          models: [
            { id: "claude-test", cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } },
            // A small window, so memory-flush and compaction thresholds are reachable in a test.
            { id: "claude-small", contextWindow: 30_000 },
          ],
        },
        fakeopenai: {
          baseUrl: `${fakeModelUrl}/v1`,
          apiKey: "test-openai-key",
          api: "openai-completions",
          models: [
            { id: "gpt-test", cost: { input: 1.25, output: 10, cacheRead: 0.125, cacheWrite: 0 } },
          ],
        },
      },
    },
  };
}

/**
 * `channels.slack` pointed at the fake Slack Web API (functions/channels/slack/simulate/slack-api.ts). Two accounts: the
 * default one on /slack/events and "ops" on its own path with its own secrets
 * ("probe": own path and bot token, default signing secret; "plain": own path, the default account's
 * secrets, streaming off for the tests about that setting). Channel C0OPEN needs
 * no mention and threads every reply; C0MEMBERS needs no mention but admits only UMEMBER as a sender;
 * C0GATED (the "*" entry) requires a mention. DMs are open on the default account; "ops" pairs
 * unknown DM senders. Streaming is left at the default ("partial") as a user gets it.
 */
export const TEST_SLACK = {
  signingSecret: "test-slack-signing-secret",
  opsSigningSecret: "test-slack-ops-signing-secret",
  team: "TTEST",
  botUserId: "UBOTTEST",
  botId: "BBOTTEST",
  probeBotToken: "xoxb-test-probe-P7Q9",
  /** Account "nodm": the default account's secrets with DMs off (`dm.enabled: false`). */
  noDmPath: "/slack/nodm/events",
} as const;

function slackTestChannel(fakeSlackUrl: string): Record<string, unknown> {
  return {
    mode: "http",
    apiBaseUrl: `${fakeSlackUrl}/api/`,
    botToken: { source: "env", id: "TEST_SLACK_BOT_TOKEN" },
    signingSecret: { source: "env", id: "TEST_SLACK_SIGNING_SECRET" },
    dmPolicy: "open",
    allowFrom: ["*"],
    groupPolicy: "allowlist",
    channels: {
      C0OPEN: { requireMention: false, replyToMode: "all" },
      C0THREADS: { requireMention: true, replyToMode: "all" },
      C0MEMBERS: { requireMention: false, users: ["UMEMBER"] },
      "*": { requireMention: true },
    },
    slashCommand: { enabled: true },
    accounts: {
      default: {},
      plain: { webhookPath: "/slack/plain/events", streaming: { mode: "off" } },
      // DMs turned off: a DM's edits, reactions and clicks are dropped like its messages
      // (test/channels/contract/system-events.test.ts).
      nodm: { webhookPath: TEST_SLACK.noDmPath, dm: { enabled: false } },
      ops: {
        webhookPath: "/slack/ops/events",
        dmPolicy: "pairing",
        allowFrom: [],
        streaming: { mode: "partial" },
        botToken: { source: "env", id: "TEST_SLACK_OPS_BOT_TOKEN" },
        signingSecret: { source: "env", id: "TEST_SLACK_OPS_SIGNING_SECRET" },
      },
      // Pairing like "ops", but used by one test file only: the 3-pending cap per account is shared
      // by every file that DMs "ops" as a stranger, so a test that must mint a code gets its own.
      pairing: {
        webhookPath: "/slack/pairing/events",
        dmPolicy: "pairing",
        allowFrom: [],
        botToken: { source: "env", id: "TEST_SLACK_OPS_BOT_TOKEN" },
        signingSecret: { source: "env", id: "TEST_SLACK_OPS_SIGNING_SECRET" },
      },
      // Its own token, so a test can make only this account's auth.test hang or fail.
      // A 1 MB mediaMaxMb, so file-size bounds are tested without moving 20 MB around.
      probe: {
        webhookPath: "/slack/probe/events",
        botToken: TEST_SLACK.probeBotToken,
        mediaMaxMb: 1,
      },
      // Socket Mode through the companion: no Request URL; the default account's bot token for replies.
      sock: { mode: "socket", appToken: { source: "env", id: "TEST_SLACK_APP_TOKEN" } },
      // A user who opened DMs (dmPolicy "open", allowFrom ["*"], as the Slack docs show) and listed no
      // channel: its own empty `channels` map keeps it out of the root's, so groups are at the default
      // (allowlist, nothing listed). test/channels/slack/group-defaults.test.ts.
      lockdown: {
        webhookPath: "/slack/lockdown/events",
        dmPolicy: "open",
        allowFrom: ["*"],
        channels: {},
        botToken: { source: "env", id: "TEST_SLACK_OPS_BOT_TOKEN" },
        signingSecret: { source: "env", id: "TEST_SLACK_OPS_SIGNING_SECRET" },
      },
    },
  };
}

/**
 * `channels.line` pointed at the fake LINE API (functions/channels/line/simulate/line-api.ts, API and content host in
 * one). The default account is what a user gets: no keys but the base URLs, secrets from the env
 * fallbacks LINE_CHANNEL_ACCESS_TOKEN / LINE_CHANNEL_SECRET, dmPolicy "pairing", groupPolicy
 * "allowlist" with nothing allowed. "biz" is the convenience account (own path and secrets): open
 * DMs and an allowlisted group map — GROUP_OPEN needs no mention, GROUP_GATED needs one,
 * GROUP_MEMBERS admits only MEMBER as a sender.
 */
export const TEST_LINE = {
  channelSecret: "test-line-channel-secret",
  bizChannelSecret: "test-line-biz-channel-secret",
  botUserId: `U${"b0".repeat(16)}`,
  groupOpen: `C${"0a".repeat(16)}`,
  groupGated: `C${"0b".repeat(16)}`,
  groupMembers: `C${"0c".repeat(16)}`,
  member: `U${"0d".repeat(16)}`,
} as const;

function lineTestChannel(fakeLineUrl: string): Record<string, unknown> {
  return {
    apiBaseUrl: fakeLineUrl,
    dataApiBaseUrl: fakeLineUrl,
    accounts: {
      default: {},
      biz: {
        webhookPath: "/line/biz",
        channelAccessToken: { source: "env", id: "TEST_LINE_BIZ_ACCESS_TOKEN" },
        channelSecret: { source: "env", id: "TEST_LINE_BIZ_CHANNEL_SECRET" },
        dmPolicy: "open",
        allowFrom: ["*"],
        mediaMaxMb: 1,
        groups: {
          [TEST_LINE.groupOpen]: { requireMention: false },
          [TEST_LINE.groupGated]: {},
          [TEST_LINE.groupMembers]: { requireMention: false, allowFrom: [TEST_LINE.member] },
        },
      },
    },
  };
}

/**
 * `channels.sms` pointed at the fake Twilio API (functions/channels/sms/simulate/twilio-api.ts), with the defaults a user
 * gets (dmPolicy "pairing", textChunkLimit 1500, no publicWebhookUrl: the URL the Worker sees is the
 * one verified). The numbers in `allowFrom` talk to the agent; any other number is a stranger and
 * gets a pairing code. "proxied" sits behind a proxy: Twilio signs its `publicWebhookUrl`, not the
 * URL the Worker receives. "service" sends through a Messaging Service instead of a number.
 */
export const TEST_TWILIO = {
  accountSid: "AC0000000000000000000000000000beef",
  authToken: "test-twilio-auth-token",
  fromNumber: "+15550001000",
  proxiedFromNumber: "+15550002000",
  messagingServiceSid: "MG0000000000000000000000000000beef",
  proxiedPublicUrl: "https://sms.example.com/twilio/inbound?acct=proxied",
  /** Allowlisted senders, one per test that needs its own conversation. */
  allowed: Array.from({ length: 12 }, (_, i) => `+1555010${String(i + 1).padStart(4, "0")}`),
} as const;

function smsTestChannel(fakeTwilioUrl: string): Record<string, unknown> {
  return {
    accountSid: TEST_TWILIO.accountSid,
    authToken: { source: "env", id: "TEST_TWILIO_AUTH_TOKEN" },
    apiBaseUrl: fakeTwilioUrl,
    // One written with the prefix and punctuation OpenClaw accepts; it is normalised to the E.164 form.
    allowFrom: [
      ...TEST_TWILIO.allowed.slice(0, -1),
      `twilio-sms:${TEST_TWILIO.allowed.at(-1)!.replace(/^\+1(\d{3})(\d{3})(\d{4})$/, "+1 ($1) $2-$3")}`,
    ],
    accounts: {
      default: { fromNumber: TEST_TWILIO.fromNumber },
      proxied: {
        webhookPath: "/webhooks/sms/proxied",
        fromNumber: TEST_TWILIO.proxiedFromNumber,
        publicWebhookUrl: TEST_TWILIO.proxiedPublicUrl,
      },
      service: {
        webhookPath: "/webhooks/sms/service",
        messagingServiceSid: TEST_TWILIO.messagingServiceSid,
      },
    },
  };
}

/**
 * `channels.telegram` pointed at the fake Bot API (functions/channels/telegram/simulate/telegram-api.ts), with the defaults a
 * user gets: pairing DMs (only the owner and `allowed` are let in), streaming "progress", replyToMode
 * off. Group forumGroup is a forum supergroup that requires a mention; openGroup an ordinary group
 * that does not. The "partial" account (its own bot, secret and path) streams the answer into an
 * edited preview, for the tests about that setting.
 */
export const TEST_TELEGRAM = {
  botToken: "7000000001:test-default-token",
  botId: "7000000001",
  webhookSecret: "test-telegram-webhook-secret",
  botUsername: "edgeclaw_test_bot",
  owner: "70001",
  /** Allowed DM senders, one per test that needs its own chat. */
  allowed: Array.from({ length: 12 }, (_, i) => String(70002 + i)),
  forumGroup: "-1001000000001",
  openGroup: "-1001000000002",
  partialBotToken: "7000000002:test-partial-token",
  partialWebhookSecret: "test-telegram-partial-secret",
} as const;

function telegramTestChannel(fakeTelegramUrl: string): Record<string, unknown> {
  return {
    apiRoot: fakeTelegramUrl,
    botToken: { source: "env", id: "TEST_TELEGRAM_BOT_TOKEN" },
    webhookSecret: { source: "env", id: "TEST_TELEGRAM_WEBHOOK_SECRET" },
    botUsername: TEST_TELEGRAM.botUsername,
    allowFrom: [TEST_TELEGRAM.owner, ...TEST_TELEGRAM.allowed],
    groups: {
      // Topic 7 of the forum needs no mention; every other topic inherits the group's requireMention.
      [TEST_TELEGRAM.forumGroup]: {
        requireMention: true,
        topics: { "7": { requireMention: false } },
      },
      [TEST_TELEGRAM.openGroup]: { requireMention: false },
    },
    accounts: {
      default: {},
      // Long-polled by the companion (mode "polling"): no webhook path is served for it.
      poll: {
        mode: "polling",
        botToken: { source: "env", id: "TEST_TELEGRAM_POLL_BOT_TOKEN" },
        webhookPath: "/telegram-webhook/poll",
      },
      partial: {
        webhookPath: "/telegram-webhook/partial",
        botToken: { source: "env", id: "TEST_TELEGRAM_PARTIAL_BOT_TOKEN" },
        webhookSecret: { source: "env", id: "TEST_TELEGRAM_PARTIAL_WEBHOOK_SECRET" },
        streaming: { mode: "partial" },
      },
    },
  };
}

/**
 * `channels.relay`: the test-only channel (test/channels/relay/, registered by
 * test/setup/register-channels.ts) on the fake relay API. Open DMs and groups, no mention needed.
 */
export const TEST_RELAY = { secret: "test-relay-secret", token: "test-relay-token" } as const;

function relayTestChannel(fakeRelayUrl: string): Record<string, unknown> {
  return {
    apiBaseUrl: fakeRelayUrl,
    secret: { source: "env", id: "TEST_RELAY_SECRET" },
    token: { source: "env", id: "TEST_RELAY_TOKEN" },
    dmPolicy: "open",
    allowFrom: ["*"],
    groupPolicy: "open",
    requireMention: false,
  };
}

/**
 * `channels.googlechat` pointed at the fake Google (functions/channels/googlechat/simulate/googlechat-api.ts: key sets, token
 * exchange, Chat API). The default account has the defaults a user gets (pairing DMs, allowlisted
 * spaces with mentions required) with one known user and one open space; "project" verifies
 * project-number tokens on its own path.
 */
export const TEST_GOOGLECHAT = {
  appUrlAudience: "https://edgeclaw.test/googlechat",
  projectNumber: "123456789012",
  botUser: "users/app-bot",
  owner: "users/owner-1",
  openSpace: "spaces/GOPEN",
};

function googleChatTestChannel(fakeUrl: string): Record<string, unknown> {
  const urls = {
    apiBaseUrl: `${fakeUrl}/`,
    tokenUrl: `${fakeUrl}/token`,
    oidcJwksUrl: `${fakeUrl}/oauth2/v3/certs`,
    chatJwksUrl: `${fakeUrl}/service_accounts/v1/metadata/jwk/chat@system.gserviceaccount.com`,
  };
  return {
    ...urls,
    audienceType: "app-url",
    audience: TEST_GOOGLECHAT.appUrlAudience,
    botUser: TEST_GOOGLECHAT.botUser,
    allowFrom: [TEST_GOOGLECHAT.owner],
    groups: { [TEST_GOOGLECHAT.openSpace]: { requireMention: true } },
    accounts: {
      default: {},
      project: {
        webhookPath: "/googlechat/project",
        audienceType: "project-number",
        audience: TEST_GOOGLECHAT.projectNumber,
        serviceAccount: { source: "env", id: "GOOGLE_CHAT_SERVICE_ACCOUNT" },
      },
    },
  };
}

/**
 * `channels.feishu` pointed at the fake Open Platform (functions/channels/feishu/simulate/feishu-api.ts). The default account
 * is what a user gets in webhook mode: only `connectionMode` and the base URL in config; app id,
 * secret, Encrypt Key, Verification Token and the bot's open_id from the FEISHU_* env fallbacks;
 * dmPolicy "pairing", groupPolicy "allowlist" with nothing allowed. "plain" is an app without an
 * Encrypt Key (token-only, on /feishu/plain) with open DMs and a group map — GROUP_OPEN needs no
 * mention, GROUP_GATED needs one, GROUP_MEMBERS admits only MEMBER. "ws" stays in websocket mode
 * (the companion's): the Worker must not serve its path.
 */
export const TEST_FEISHU = {
  appId: "cli_test_default",
  appSecret: "test-feishu-app-secret",
  encryptKey: "test-feishu-encrypt-key",
  verificationToken: "test-feishu-verification-token",
  botOpenId: "ou_bot0000000000000000000000000000",
  plainAppId: "cli_test_plain",
  plainAppSecret: "test-feishu-plain-secret",
  plainVerificationToken: "test-feishu-plain-token",
  plainBotOpenId: "ou_botplain00000000000000000000000",
  groupOpen: "oc_open000000000000000000000000000",
  groupGated: "oc_gated00000000000000000000000000",
  groupMembers: "oc_members000000000000000000000000",
  member: "ou_member0000000000000000000000000",
  strangersAppId: "cli_test_strangers",
} as const;

function feishuTestChannel(fakeFeishuUrl: string): Record<string, unknown> {
  return {
    connectionMode: "webhook",
    apiBaseUrl: fakeFeishuUrl,
    accounts: {
      default: {},
      plain: {
        appId: TEST_FEISHU.plainAppId,
        appSecret: { source: "env", id: "TEST_FEISHU_PLAIN_APP_SECRET" },
        verificationToken: { source: "env", id: "TEST_FEISHU_PLAIN_VERIFICATION_TOKEN" },
        botOpenId: TEST_FEISHU.plainBotOpenId,
        webhookPath: "/feishu/plain",
        domain: "lark",
        dmPolicy: "open",
        allowFrom: ["*"],
        typingIndicator: false,
        groups: {
          [TEST_FEISHU.groupOpen]: { requireMention: false },
          [TEST_FEISHU.groupGated]: {},
          [TEST_FEISHU.groupMembers]: { requireMention: false, allowFrom: [TEST_FEISHU.member] },
        },
      },
      // Its own app for the stranger-gets-a-pairing-code test: the default account's pending
      // requests (three at most) fill up with the ingress tests' unknown senders.
      strangers: {
        appId: TEST_FEISHU.strangersAppId,
        appSecret: "test-feishu-strangers-secret",
        verificationToken: "test-feishu-strangers-token",
        botOpenId: TEST_FEISHU.plainBotOpenId,
        webhookPath: "/feishu/strangers",
      },
      ws: {
        connectionMode: "websocket",
        webhookPath: "/feishu/ws",
        appId: "cli_ws",
        appSecret: "ws-secret",
        verificationToken: "ws-token",
      },
    },
  };
}

/**
 * `channels.msteams` pointed at the fake Microsoft (functions/channels/msteams/simulate/msteams-api.ts: OpenID metadata and
 * keys, client-credentials tokens, Bot Connector). The defaults a user gets (pairing DMs,
 * allowlisted groups with mentions required, replies in channel threads) with one known user and
 * one open channel; the fake's own origin is added to the serviceUrl allowlist. The app password
 * comes from the MSTEAMS_APP_PASSWORD env fallback.
 */
export const TEST_MSTEAMS = {
  appId: "00000000-aaaa-4bbb-8ccc-000000000001",
  tenantId: "11111111-2222-4333-8444-555555555555",
  owner: "aad-owner-1",
  openChannel: "19:open-channel@thread.tacv2",
  team: "19:team-eng@thread.tacv2",
  teamChannels: {
    inherits: "19:eng-general@thread.tacv2",
    gated: "19:eng-gated@thread.tacv2",
    threaded: "19:eng-threads@thread.tacv2",
    unlisted: "19:eng-secret@thread.tacv2",
  },
  /** Account "open" (groupPolicy open): in `team`, `membersChannel` admits only the owner as a sender. */
  openPath: "/api/messages/open",
  membersChannel: "19:eng-members@thread.tacv2",
};

function msTeamsTestChannel(fakeUrl: string): Record<string, unknown> {
  return {
    enabled: true,
    appId: TEST_MSTEAMS.appId,
    tenantId: TEST_MSTEAMS.tenantId,
    openIdMetadataUrl: `${fakeUrl}/botframework/v1/.well-known/openidconfiguration`,
    loginBaseUrl: `${fakeUrl}/login`,
    serviceUrlAllowlist: ["smba.trafficmanager.net", "*.botframework.com", fakeUrl],
    // Downloads: the fake under both names; the bot's token only ever to 127.0.0.1 (attachment tests).
    mediaAllowHosts: ["*.sharepoint.com", fakeUrl, fakeUrl.replace("127.0.0.1", "localhost")],
    mediaAuthAllowHosts: ["smba.trafficmanager.net", fakeUrl],
    allowFrom: [TEST_MSTEAMS.owner],
    groups: { [TEST_MSTEAMS.openChannel]: { requireMention: true } },
    // One listed team (teams-config.test.ts): per-team and per-channel requireMention / replyStyle.
    teams: {
      [TEST_MSTEAMS.team]: {
        requireMention: false,
        channels: {
          [TEST_MSTEAMS.teamChannels.inherits]: {},
          [TEST_MSTEAMS.teamChannels.gated]: { requireMention: true, replyStyle: "top-level" },
          [TEST_MSTEAMS.teamChannels.threaded]: {
            replyStyle: "thread",
            tools: { deny: ["write"] },
          },
        },
      },
    },
    accounts: {
      default: {},
      // Every group open (groupPolicy "open") but one team channel narrowed to the owner: what a
      // sender refused there must stay refused in every kind of event (test/channels/contract/system-events.test.ts).
      open: {
        webhook: { path: TEST_MSTEAMS.openPath },
        appPassword: { source: "env", id: "MSTEAMS_APP_PASSWORD" },
        groupPolicy: "open",
        teams: {
          [TEST_MSTEAMS.team]: {
            requireMention: false,
            channels: {
              [TEST_MSTEAMS.membersChannel]: { users: [TEST_MSTEAMS.owner] },
              "*": {},
            },
          },
        },
      },
    },
  };
}

/**
 * `channels.discord` on the fake REST API (functions/channels/discord/simulate/discord-api.ts), with the defaults a user gets:
 * pairing DMs, replyToMode off, streaming off, guild messages mention-gated. The default account has
 * no token in its block: it reads the DISCORD_BOT_TOKEN env fallback. Guild `guild` allowlists
 * `allowed` senders; its `open` channel needs no mention, `gated` does, any other channel is refused.
 * `publicKey` turns on the interactions endpoint (its private half signs test requests). Account
 * `partial` (its own bot) streams into an edited preview with replyToMode "first".
 */
export const TEST_DISCORD = {
  botId: "1100000000000000001",
  botToken: "MTEwMDAwMDAwMDAwMDAwMDAwMQ.GfakeT.test-discord-default-token",
  applicationId: "1100000000000000001",
  publicKey: "8718cf825fa0caaa60dee9d6fb505928db7594000f5ed643110b9d42a2d39d12",
  privateKeyPkcs8:
    "302e020100300506032b65700422042096da67773508792d9e50c58a0114dc9944269791902e67ac3f3f327d8c99c9ec",
  owner: "1200000000000000001",
  /** Allowed senders (DMs and the guild), one per test that needs its own conversation. */
  allowed: Array.from({ length: 16 }, (_, i) => String(1200000000000000002n + BigInt(i))),
  guild: "1300000000000000001",
  openChannel: "1300000000000000011",
  gatedChannel: "1300000000000000012",
  otherChannel: "1300000000000000013",
  partialBotId: "1100000000000000002",
  /** A channel of the guild open to holders of `role` (beside the guild's users), no mention needed. */
  rolesChannel: "1300000000000000014",
  role: "1600000000000000001",
} as const;

function discordTestChannel(fakeDiscordUrl: string): Record<string, unknown> {
  return {
    enabled: true,
    apiBaseUrl: `${fakeDiscordUrl}/api/v10`,
    applicationId: TEST_DISCORD.applicationId,
    publicKey: TEST_DISCORD.publicKey,
    // Discord's CDN, and the fake serving attachments (/attachments/…) on loopback.
    mediaAllowHosts: ["cdn.discordapp.com", "media.discordapp.net", fakeDiscordUrl],
    allowFrom: [TEST_DISCORD.owner, ...TEST_DISCORD.allowed],
    guilds: {
      [TEST_DISCORD.guild]: {
        requireMention: true,
        users: [TEST_DISCORD.owner, ...TEST_DISCORD.allowed],
        channels: {
          // Its tools.deny narrows runs there and in its threads (functions/agent/tools/conversation-policy.ts).
          [TEST_DISCORD.openChannel]: { requireMention: false, tools: { deny: ["write"] } },
          [TEST_DISCORD.gatedChannel]: {},
          [TEST_DISCORD.rolesChannel]: { requireMention: false, roles: [TEST_DISCORD.role] },
        },
      },
    },
    accounts: {
      default: {},
      // Its own bot, streaming the answer into an edited preview and quoting the first chunk.
      partial: {
        token: { source: "env", id: "TEST_DISCORD_PARTIAL_TOKEN" },
        streaming: { mode: "partial" },
        replyToMode: "first",
      },
    },
  };
}

/**
 * `channels.mattermost` pointed at the fake Mattermost (functions/channels/mattermost/simulate/mattermost-api.ts). The default
 * account is what a user gets (dmPolicy "pairing", groupPolicy "allowlist" with nothing allowed,
 * chatmode "oncall"); "team" is the convenience account: open DMs, every channel allowed with a
 * mention required, MMOPENCHANNEL0000000000000 without one, MMMEMBERSCHAN0000000000000 only for
 * MMMEMBER; "chatty" answers every channel message (chatmode onmessage), "prefix" `!`-prefixed ones;
 * "plain" is "team"'s DMs with streaming off.
 */
export const TEST_MATTERMOST = {
  botToken: "mm-test-token",
  /** Who the fake's token belongs to (GET /users/me). */
  bot: FAKE_MATTERMOST_BOT,
  openChannel: "mmopenchannel0000000000000",
  membersChannel: "mmmemberschan0000000000000",
  member: "mmmember000000000000000000",
  /** Like membersChannel, for the slash-command tests alone. */
  commandsChannel: "mmcommandschan00000000000",
  teamCommandPath: "/api/channels/mattermost/command/team",
  prefixCommandPath: "/api/channels/mattermost/command/prefix",
} as const;

function mattermostTestChannel(fakeMattermostUrl: string): Record<string, unknown> {
  const allowAll = { dmPolicy: "open", allowFrom: ["*"], groupPolicy: "allowlist" };
  return {
    baseUrl: `${fakeMattermostUrl}/api/v4`,
    botToken: { source: "env", id: "TEST_MATTERMOST_BOT_TOKEN" },
    // The fake is on loopback, which the private-network guard refuses by default (test/channels/mattermost/private-network.test.ts).
    network: { dangerouslyAllowPrivateNetwork: true },
    accounts: {
      // Native slash commands (test/channels/mattermost/native-commands.test.ts): "cmds" (the defaults a user
      // gets, pairing its own so other files' strangers never share its pending-code limit) on the default
      // callback path, "team" and "prefix" on their own ("prefix" is never registered).
      default: {},
      cmds: { commands: { native: true } },
      team: {
        ...allowAll,
        commands: { native: true, callbackPath: TEST_MATTERMOST.teamCommandPath },
        // Button clicks (test/channels/mattermost/interactions.test.ts) from loopback and one documentation range.
        interactions: { allowedSourceIps: ["127.0.0.1", "::1", "198.51.100.0/24"] },
        groups: {
          "*": { requireMention: true },
          [TEST_MATTERMOST.openChannel]: { requireMention: false },
          [TEST_MATTERMOST.membersChannel]: {
            requireMention: false,
            users: [TEST_MATTERMOST.member],
          },
          [TEST_MATTERMOST.commandsChannel]: {
            requireMention: false,
            users: [TEST_MATTERMOST.member],
          },
        },
      },
      chatty: { ...allowAll, chatmode: "onmessage", groups: { "*": {} } },
      prefix: {
        ...allowAll,
        chatmode: "onchar",
        groups: { "*": {} },
        commands: { native: true, callbackPath: TEST_MATTERMOST.prefixCommandPath },
      },
      plain: { ...allowAll, streaming: { mode: "off" } },
    },
  };
}

/** The outbound key the test Worker signs sandbox requests with (the sandbox host accepts it). */
export const TEST_SANDBOX_KEY = { id: "sbx", secret: "test-sandbox-outbound-secret" };
