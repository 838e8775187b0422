import type { TestProject } from "vitest/node";
import { startLocalPostgres } from "../../scripts/lib/local-postgres.ts";
import { startFakeModelServer } from "../fakes/model-server.ts";
import { startFakeWebServer } from "../fakes/web-server.ts";
import { startFakeSlackApi } from "../../functions/channels/slack/simulate/slack-api.ts";
import { startFakeDohServer } from "../fakes/doh-server.ts";
import { startFakeLineApi } from "../../functions/channels/line/simulate/line-api.ts";
import { startFakeGoogleChatApi } from "../../functions/channels/googlechat/simulate/googlechat-api.ts";
import { startFakeMsTeamsApi } from "../../functions/channels/msteams/simulate/msteams-api.ts";
import { startFakeTwilioApi } from "../../functions/channels/sms/simulate/twilio-api.ts";
import { startFakeTelegramApi } from "../../functions/channels/telegram/simulate/telegram-api.ts";
import { startFakeRelayApi } from "../fakes/relay-api.ts";
import { startFakeFeishuApi } from "../../functions/channels/feishu/simulate/feishu-api.ts";
import { startFakeDiscordApi } from "../../functions/channels/discord/simulate/discord-api.ts";
import { startFakeMattermost } from "../../functions/channels/mattermost/simulate/mattermost-api.ts";
import { TEST_FEISHU, TEST_SANDBOX_KEY, TEST_TWILIO } from "./test-config.ts";
import { startSandboxServer } from "../../companion/src/sandbox/server.ts";
import { makeCondaRoot, SANDBOX_CONDA_PREFIX } from "../fakes/conda/root.ts";
import { startFakeContainerEngine } from "../fakes/container-engine.ts";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Starts the loopback services every workerd test talks to (Postgres, fake platforms, fake model
 * providers) and hands their addresses to the pool through `provide`. The platform fakes are shipped
 * code (functions/channels/<id>/simulate/: `edgeclaw simulate` plays the platforms with them), the model,
 * web and DNS fakes live in test/fakes/; each exposes `/_control/*` endpoints that tests inside workerd call to script it and read its log.
 */
export default async function setup(project: TestProject) {
  const stops: Array<() => Promise<void>> = [];
  const pg = await startLocalPostgres();
  stops.push(() => pg.stop());
  project.provide("databaseUrl", pg.databaseUrl);
  project.provide("pgWsProxy", pg.wsProxy);
  // A second way in to the same database that the Postgres tests may freeze, kill and count.
  project.provide("pgChaosProxy", (await pg.addBridge({ control: true })).wsProxy);
  const fakeModel = await startFakeModelServer();
  stops.push(() => fakeModel.stop());
  project.provide("fakeModelUrl", fakeModel.url);
  const fakeWeb = await startFakeWebServer();
  stops.push(() => fakeWeb.stop());
  project.provide("fakeWebUrl", fakeWeb.url);
  const fakeSlack = await startFakeSlackApi();
  stops.push(() => fakeSlack.stop());
  project.provide("fakeSlackUrl", fakeSlack.url);
  const fakeDoh = await startFakeDohServer();
  stops.push(() => fakeDoh.stop());
  project.provide("fakeDohUrl", fakeDoh.url);
  const fakeLine = await startFakeLineApi();
  stops.push(() => fakeLine.stop());
  project.provide("fakeLineUrl", fakeLine.url);
  const fakeTwilio = await startFakeTwilioApi({
    accounts: { [TEST_TWILIO.accountSid]: TEST_TWILIO.authToken },
  });
  stops.push(() => fakeTwilio.stop());
  project.provide("fakeTwilioUrl", fakeTwilio.url);
  const fakeTelegram = await startFakeTelegramApi();
  stops.push(() => fakeTelegram.stop());
  project.provide("fakeTelegramUrl", fakeTelegram.url);
  const fakeRelay = await startFakeRelayApi();
  stops.push(() => fakeRelay.stop());
  project.provide("fakeRelayUrl", fakeRelay.url);
  const fakeFeishu = await startFakeFeishuApi({
    apps: {
      [TEST_FEISHU.appId]: TEST_FEISHU.appSecret,
      [TEST_FEISHU.plainAppId]: TEST_FEISHU.plainAppSecret,
    },
  });
  stops.push(() => fakeFeishu.stop());
  project.provide("fakeFeishuUrl", fakeFeishu.url);

  const fakeGoogleChat = await startFakeGoogleChatApi();
  stops.push(() => fakeGoogleChat.stop());
  project.provide("fakeGoogleChatUrl", fakeGoogleChat.url);
  project.provide("googleChatServiceAccount", fakeGoogleChat.serviceAccountJson);

  const fakeMsTeams = await startFakeMsTeamsApi();
  stops.push(() => fakeMsTeams.stop());
  project.provide("fakeMsTeamsUrl", fakeMsTeams.url);

  const fakeDiscord = await startFakeDiscordApi();
  stops.push(() => fakeDiscord.stop());
  project.provide("fakeDiscordUrl", fakeDiscord.url);
  const fakeMattermost = await startFakeMattermost();
  stops.push(() => fakeMattermost.stop());
  project.provide("fakeMattermostUrl", fakeMattermost.url);
  // The real local sandbox backend: the companion's sandbox host (bubblewrap), signed requests.
  // It sees a conda root at /opt/conda (the conda stand-in, test/fakes/conda/) as the image has one.
  const sandbox = await startSandboxServer({
    root: mkdtempSync(join(tmpdir(), "edgeclaw-test-sandbox-")),
    keys: [{ id: TEST_SANDBOX_KEY.id, secret: TEST_SANDBOX_KEY.secret }],
    binds: [{ source: makeCondaRoot(), target: SANDBOX_CONDA_PREFIX, writable: true }],
  });
  stops.push(() => sandbox.stop());
  project.provide("sandboxUrl", `http://127.0.0.1:${sandbox.port}`);
  // The sandbox container backend's stand-in runtime: the image's host process per container.
  const containerEngine = await startFakeContainerEngine();
  stops.push(() => containerEngine.stop());
  project.provide("containerEngineUrl", containerEngine.url);

  return async () => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  };
}

declare module "vitest" {
  export interface ProvidedContext {
    databaseUrl: string;
    pgWsProxy: string;
    pgChaosProxy: string;
    fakeModelUrl: string;
    fakeWebUrl: string;
    fakeSlackUrl: string;
    fakeDohUrl: string;
    fakeLineUrl: string;
    fakeTwilioUrl: string;
    fakeTelegramUrl: string;
    fakeRelayUrl: string;
    fakeGoogleChatUrl: string;
    fakeMsTeamsUrl: string;
    fakeDiscordUrl: string;
    googleChatServiceAccount: string;
    fakeFeishuUrl: string;
    fakeMattermostUrl: string;
    sandboxUrl: string;
    containerEngineUrl: string;
  }
}
