import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { checkConfig } from "../../functions/routing/config-check.ts";

/** Feishu in "websocket" mode (the default) is not served over HTTP: the config check says so. */
describe("config check: Feishu not served", () => {
  it("names the account and the key that serves it, and says nothing once it is webhook mode", () => {
    const unserved = checkConfig({ channels: { feishu: { accounts: { work: {} } } } });
    assert.ok(unserved.ok);
    const lines = unserved.warnings.filter((w) => w.includes("connectionMode"));
    assert.equal(lines.length, 2, unserved.warnings.join("\n"));
    assert.match(
      lines[0]!,
      /^channels\.feishu: connectionMode is "websocket".*set channels\.feishu\.connectionMode: "webhook"$/,
    );
    assert.match(lines[1]!, /^channels\.feishu\.accounts\.work: /);
    const served = checkConfig({ channels: { feishu: { connectionMode: "webhook" } } });
    assert.deepEqual(
      served.warnings.filter((w) => w.includes("connectionMode")),
      [],
    );
  });
});
