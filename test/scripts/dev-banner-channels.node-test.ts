import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseConfig } from "../../functions/channels/gateway-config.ts";
import { devReadyBanner } from "../../scripts/lib/dev-banner.ts";
import { configuredVarNames, shellVars } from "../../scripts/lib/dev-vars.ts";

/**
 * The `npm run dev` banner names every enabled channel account that cannot work as configured —
 * each missing credential with what fails without it, and a Feishu account nothing serves —
 * instead of listing its webhook URL as if it were ready.
 */
function banner(raw: Record<string, unknown>, vars: Record<string, string>): string[] {
  return devReadyBanner({
    url: "http://127.0.0.1:8787",
    summary: "config edgeclaw.json5",
    dataDir: "/tmp/data",
    config: parseConfig(raw),
    vars,
    auth: { kind: "none" },
  });
}

describe("dev banner: channels that cannot work", () => {
  it("names each missing secret of each enabled account, and a Feishu account in websocket mode", () => {
    const lines = banner({ channels: { line: {}, discord: {}, feishu: {} } }, {});
    const text = lines.join("\n");
    assert.match(
      text,
      /^ {2}channels\.line: missing LINE_CHANNEL_SECRET \(channel secret; without it every LINE webhook is refused \(401\)\), LINE_CHANNEL_ACCESS_TOKEN \(channel access token; without it replies cannot be sent\); set in \.dev\.vars or the shell, then restart/m,
    );
    assert.match(text, /^ {2}channels\.discord: missing DISCORD_BOT_TOKEN /m);
    assert.match(
      text,
      /^ {2}channels\.feishu: not served — connectionMode is "websocket".*set channels\.feishu\.connectionMode: "webhook"$/m,
    );
    assert.match(text, /^ {2}channels\.feishu: missing FEISHU_APP_ID /m);
  });

  it("says nothing once the secrets are set (here: a channel's env fallbacks from the shell)", () => {
    const raw = { channels: { line: {} } };
    const shell = { LINE_CHANNEL_SECRET: "s", LINE_CHANNEL_ACCESS_TOKEN: "t", UNRELATED: "u" };
    // dev hands the Worker the shell's values of the names the config makes it read
    const vars = shellVars(shell, configuredVarNames(raw, parseConfig(raw)));
    assert.deepEqual(vars, { LINE_CHANNEL_SECRET: "s", LINE_CHANNEL_ACCESS_TOKEN: "t" });
    assert.doesNotMatch(banner(raw, vars).join("\n"), /channels\.line: missing/);
  });
});
