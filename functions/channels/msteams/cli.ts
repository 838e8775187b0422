import { writeFileSync } from "node:fs";
import { deflateSync } from "node:zlib";
import { crc32, zip } from "../../../scripts/lib/zip.ts";
import { loadConfigFile } from "../../../scripts/lib/config-file.ts";
import type { CommandSpec } from "../../../scripts/cli/command-spec.ts";
import { UsageError } from "../../../scripts/cli/http.ts";

/**
 * `edgeclaw channels msteams package`: writes the Teams app package to upload (Apps → Manage your
 * apps → Upload an app): manifest.json (schema v1.23, the bot = the app id, scopes personal / team /
 * groupChat, files in personal chats) and the two icons Teams requires (color 192×192, outline
 * 32×32 white on transparent), zipped. The app id comes from --app-id, else MSTEAMS_APP_ID, else a
 * plain-string `channels.msteams.appId` in the config file.
 */

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function teamsManifest(appId: string, name: string): Record<string, unknown> {
  return {
    $schema:
      "https://developer.microsoft.com/en-us/json-schemas/teams/v1.23/MicrosoftTeams.schema.json",
    manifestVersion: "1.23",
    version: "1.0.0",
    id: appId,
    name: { short: name.slice(0, 30), full: name.slice(0, 100) },
    developer: {
      name: "edgeclaw",
      websiteUrl: "https://github.com/openclaw/openclaw",
      privacyUrl: "https://github.com/openclaw/openclaw",
      termsOfUseUrl: "https://github.com/openclaw/openclaw",
    },
    description: {
      short: `${name} in Teams`.slice(0, 80),
      full: `${name}: an AI agent gateway bot.`,
    },
    icons: { outline: "outline.png", color: "color.png" },
    accentColor: "#5B6DEF",
    bots: [
      {
        botId: appId,
        scopes: ["personal", "team", "groupChat"],
        isNotificationOnly: false,
        supportsCalling: false,
        supportsVideo: false,
        supportsFiles: true,
      },
    ],
    webApplicationInfo: { id: appId },
    authorization: {
      permissions: {
        resourceSpecific: [
          { name: "ChannelMessage.Read.Group", type: "Application" },
          { name: "ChatMessage.Read.Chat", type: "Application" },
        ],
      },
    },
  };
}

/** A square PNG of one RGBA colour (what the icons need; the user may swap in artwork later). */
export function solidPng(size: number, rgba: [number, number, number, number]): Buffer {
  const row = Buffer.alloc(1 + size * 4);
  for (let x = 0; x < size; x++) row.set(rgba, 1 + x * 4);
  const raw = Buffer.concat(Array.from({ length: size }, () => row));
  const chunk = (type: string, data: Buffer) => {
    const head = Buffer.alloc(8);
    head.writeUInt32BE(data.length, 0);
    head.write(type, 4, "ascii");
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
    return Buffer.concat([head, data, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr.set([8, 6, 0, 0, 0], 8); // 8-bit RGBA
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("IDAT", deflateSync(raw)),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

function appIdFrom(options: Record<string, string | boolean | undefined>): string {
  if (typeof options["app-id"] === "string") return options["app-id"];
  if (process.env.MSTEAMS_APP_ID) return process.env.MSTEAMS_APP_ID;
  const raw = loadConfigFile().raw as { channels?: { msteams?: { appId?: unknown } } };
  const fromConfig = raw.channels?.msteams?.appId;
  if (typeof fromConfig === "string" && fromConfig) return fromConfig;
  throw new UsageError(
    "no app id: pass --app-id, set MSTEAMS_APP_ID, or put channels.msteams.appId in edgeclaw.json5 (the Azure Bot's Microsoft App ID)",
  );
}

/** This channel's `edgeclaw` commands (scripts/cli/commands.ts finds them here). */
export const commands: CommandSpec[] = [
  {
    name: "channels msteams package",
    args: [],
    options: { "app-id": "guid", out: "file", name: "name" },
    summary: "write the Teams app package (manifest.json + icons, zipped) to upload in Teams",
    async run({ options, print }) {
      const appId = appIdFrom(options);
      if (!GUID.test(appId))
        throw new UsageError(
          `the app id must be the Azure Bot's Microsoft App ID (a GUID), got "${appId}"`,
        );
      const out = typeof options.out === "string" ? options.out : "edgeclaw-teams-app.zip";
      const name = typeof options.name === "string" ? options.name : "edgeclaw";
      const archive = zip([
        {
          name: "manifest.json",
          data: Buffer.from(JSON.stringify(teamsManifest(appId, name), null, 2)),
        },
        { name: "color.png", data: solidPng(192, [0x5b, 0x6d, 0xef, 0xff]) },
        { name: "outline.png", data: solidPng(32, [0xff, 0xff, 0xff, 0xff]) },
      ]);
      writeFileSync(out, archive);
      print(
        { ok: true, file: out, appId },
        () =>
          `wrote ${out} (${archive.length} bytes) for app ${appId}: Teams → Apps → Manage your apps → Upload an app`,
      );
      return 0;
    },
  },
];
