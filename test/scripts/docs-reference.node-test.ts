import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { referencePages } from "../../scripts/docs/gen.ts";
import { projectRoot } from "./helpers.ts";

/**
 * docs/reference/ is generated from the code (config schema, CLI specs, admin routes, metrics
 * catalog); a change to any of them without `npm run docs:gen` leaves the page stale and fails here.
 */
describe("generated reference pages", async () => {
  const pages = await referencePages(projectRoot);

  for (const [path, text] of Object.entries(pages))
    it(`${path} is current (npm run docs:gen)`, () => {
      let onDisk: string;
      try {
        onDisk = readFileSync(join(projectRoot, path), "utf8");
      } catch {
        assert.fail(`${path} is missing: run npm run docs:gen`);
      }
      assert.equal(onDisk, text, `${path} is stale: run npm run docs:gen`);
    });

  it("the config page holds the base keys and every channel's keys with their defaults", () => {
    const config = pages["docs/reference/config.md"]!;
    assert.match(config, /\| `gateway\.auth\.rateLimit\.maxAttempts` \| integer > 0 \| `10` \|/);
    assert.match(
      config,
      /\| `channels\.slack\.signingSecret` \| secret \(string or SecretRef\) \|/,
    );
    assert.match(config, /\| `channels\.line\.webhookPath` \| string \| `"\/line\/webhook"` \|/);
    for (const channel of ["slack", "telegram", "sms", "line", "googlechat", "feishu"])
      assert.match(config, new RegExp(`^## channels\\.${channel}$`, "m"));
  });

  it("the admin page lists routes declared in a loop, the CLI page every command", () => {
    assert.match(
      pages["docs/reference/admin-api.md"]!,
      /`POST` \| `\/admin\/pairing\/:channel\/approve` \| JSON `\{ code \}`/,
    );
    assert.match(pages["docs/reference/cli.md"]!, /`edgeclaw pairing approve <channel> <code>`/);
    assert.match(
      pages["docs/reference/metrics.md"]!,
      /`edgeclaw_ack_latency_seconds` \| histogram/,
    );
  });
});
