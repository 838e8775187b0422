import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { checkConfig } from "../../functions/routing/config-check.ts";
import { parseConfig } from "../../functions/channels/gateway-config.ts";
import { requiredSecrets } from "../../functions/control/required-secrets.ts";
import { configuredVarNames } from "../../scripts/lib/dev-vars.ts";

/**
 * `auth.profiles` / `auth.order` (#24 item 5): what the config check says about profiles a call
 * could never use. The same errors fail the gateway's own parse (functions/config/schema.ts).
 */
const provider = {
  models: { providers: { local: { baseUrl: "http://127.0.0.1:1", api: "openai-completions" } } },
};

describe("config check: auth profiles", () => {
  it("a profile naming an unknown provider is an error that names the key and the way out", () => {
    const report = checkConfig({ auth: { profiles: { "antropic:work": { mode: "api_key" } } } });
    assert.equal(report.ok, false);
    assert.ok(
      report.errors.some(
        (e) =>
          e.includes("auth.profiles.antropic:work.provider") &&
          e.includes('unknown model provider "antropic"') &&
          e.includes("models.providers.antropic"),
      ),
      report.errors.join("\n"),
    );
  });

  it("a provider that disagrees with the id, a malformed id and an order naming an undefined profile are errors", () => {
    const report = checkConfig({
      ...provider,
      auth: {
        profiles: {
          "anthropic:work": { provider: "openai", mode: "api_key" },
          nocolon: { mode: "api_key" },
          "local:one": {},
        },
        order: { local: ["local:one", "local:two"], anthropic: ["local:one"] },
      },
    });
    assert.equal(report.ok, false);
    const text = report.errors.join("\n");
    assert.match(
      text,
      /auth\.profiles\.anthropic:work\.provider: "openai" differs from the provider in the profile id/,
    );
    assert.match(text, /auth\.profiles.*"<provider>:<name>"/);
    assert.match(text, /auth\.order\.local\.1: "local:two" is not defined in auth\.profiles/);
    assert.match(text, /auth\.order\.anthropic\.0: "local:one" is a profile of another provider/);
  });

  it("two profiles reading the same secret are an error", () => {
    const report = checkConfig({
      ...provider,
      auth: { profiles: { "local:team-a": {}, "local:team_a": {} } },
    });
    assert.equal(report.ok, false);
    assert.match(
      report.errors.join("\n"),
      /reads the same Worker secret as "local:team-a" \(LOCAL_API_KEY_TEAM_A\)/,
    );
  });

  it("warns of profiles it never uses: an OAuth one, and one whose secret is not set", () => {
    const report = checkConfig(
      {
        ...provider,
        auth: {
          profiles: {
            "openai:personal": { provider: "openai", mode: "oauth" },
            "local:one": {},
            "local:two": {},
          },
        },
      },
      { LOCAL_API_KEY_ONE: "sk-local-one-value" },
    );
    assert.equal(report.ok, true, report.errors.join("\n"));
    const text = report.warnings.join("\n");
    assert.match(text, /auth\.profiles\.openai:personal: mode "oauth" is not supported here/);
    assert.match(
      text,
      /auth\.profiles\.local:two: its key is not set \(Worker secret LOCAL_API_KEY_TWO\)/,
    );
    assert.doesNotMatch(text, /local:one: its key/);
    assert.doesNotMatch(text, /sk-local-one-value/);
  });

  it("deploy and npm run dev know each profile's secret; the provider's own key only with a :default profile", () => {
    const raw = {
      agents: { defaults: { model: { primary: "anthropic/claude-sonnet-5" } } },
      auth: {
        profiles: { "anthropic:work": {}, "anthropic:team-b": {}, "openai:web": { mode: "oauth" } },
      },
    };
    const names = requiredSecrets(parseConfig(raw), raw).map((secret) => secret.name);
    assert.ok(
      names.includes("ANTHROPIC_API_KEY_WORK") && names.includes("ANTHROPIC_API_KEY_TEAM_B"),
      names.join(),
    );
    assert.ok(!names.includes("ANTHROPIC_API_KEY"), names.join());
    assert.ok(!names.some((name) => name.startsWith("OPENAI_API_KEY")), names.join());
    assert.ok(configuredVarNames(raw, parseConfig(raw)).includes("ANTHROPIC_API_KEY_TEAM_B"));
    const withDefault = {
      ...raw,
      auth: { profiles: { "anthropic:default": {}, "anthropic:work": {} } },
    };
    const both = requiredSecrets(parseConfig(withDefault), withDefault).map(
      (secret) => secret.name,
    );
    assert.ok(
      both.includes("ANTHROPIC_API_KEY") && both.includes("ANTHROPIC_API_KEY_WORK"),
      both.join(),
    );
  });
});
