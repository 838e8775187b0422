import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { checkConfig } from "../../functions/routing/config-check.ts";

/** Feishu in "websocket" mode (the default) is not served over HTTP: the config check says so. */
describe("config check: Feishu not served", () => {
  it("names the account and the key that serves it, and says nothing once it is webhook mode", () => {
    const root = checkConfig({ channels: { feishu: {} } });
    assert.ok(root.ok);
    assert.deepEqual(
      root.warnings.filter((w) => w.includes("connectionMode")),
      [
        `channels.feishu: connectionMode is "websocket" (OpenClaw's default), so this Worker serves no webhook for it and Feishu's events get 404; set channels.feishu.connectionMode: "webhook"`,
      ],
    );
    // With accounts listed, those are the accounts (the root is no account of its own).
    const listed = checkConfig({ channels: { feishu: { accounts: { work: {} } } } });
    const lines = listed.warnings.filter((w) => w.includes("connectionMode"));
    assert.equal(lines.length, 1, listed.warnings.join("\n"));
    assert.match(
      lines[0]!,
      /^channels\.feishu\.accounts\.work: connectionMode is "websocket".*set channels\.feishu\.accounts\.work\.connectionMode: "webhook"$/,
    );
    const served = checkConfig({ channels: { feishu: { connectionMode: "webhook" } } });
    assert.deepEqual(
      served.warnings.filter((w) => w.includes("connectionMode")),
      [],
    );
  });
});
