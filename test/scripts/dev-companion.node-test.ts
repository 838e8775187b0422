import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { accountsForKey } from "../../functions/channels/companion/socket-accounts.ts";
import { parseConfig } from "../../functions/channels/gateway-config.ts";
import {
  GENERATED_INGRESS_SECRET_FILE,
  GENERATED_SECRET_VAR,
  planDevCompanion,
} from "../../scripts/lib/dev-companion-plan.ts";
import {
  GENERATED_OUTBOUND_SECRET_FILE,
  GENERATED_OUTBOUND_SECRET_VAR,
  withCompanionUrl,
} from "../../scripts/lib/dev-companion-sandbox.ts";

/**
 * What `npm run dev` decides about the companion from the config (scripts/lib/dev-companion-plan.ts):
 * started only for socket accounts (the Worker's own rule), with the configured ingress key when one
 * is usable, else a generated one kept in the data dir and added to the bundled config; the platform
 * secrets reach both the Worker and the companion, nothing else from the shell does.
 */
const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function plan(
  raw: Record<string, unknown>,
  vars: Record<string, string> = {},
  shellEnv: NodeJS.ProcessEnv = {},
) {
  const dataDir = mkdtempSync(join(tmpdir(), "edgeclaw-devcomp-"));
  dirs.push(dataDir);
  return {
    dataDir,
    vars,
    result: planDevCompanion({ raw, config: parseConfig(raw), vars, shellEnv, dataDir }),
  };
}

describe("npm run dev's companion plan", () => {
  it("starts no companion without a socket account, webhook-mode accounts of socket-capable channels included", () => {
    assert.equal(plan({}).result, undefined);
    assert.equal(
      plan({
        channels: {
          slack: { botToken: "${SLACK_BOT_TOKEN}", signingSecret: "${SLACK_SIGNING_SECRET}" },
        },
      }).result,
      undefined,
    );
    assert.equal(
      plan({ channels: { telegram: { botToken: "${TELEGRAM_BOT_TOKEN}" } } }).result,
      undefined,
    );
    assert.equal(plan({ channels: { discord: { enabled: false } } }).result, undefined);
  });

  it("generates a key for the socket channels, keeps it in the data dir, and hands the default account's token fallback to both processes", () => {
    const raw = { channels: { discord: { dmPolicy: "allowlist", allowFrom: ["1"] } } };
    const shell = {
      DISCORD_BOT_TOKEN: "discord-token-from-shell",
      ANTHROPIC_API_KEY: "model-key",
      PATH: "/usr/bin",
      EDGECLAW_COMPANION_DEBUG: "1",
    };
    const { dataDir, vars, result } = plan(raw, {}, shell);
    assert.ok(result);
    assert.equal(result.key!.source, "generated");
    assert.equal(result.key!.id, "dev-local");
    assert.deepEqual(result.accounts, ["Discord"]);
    const file = join(dataDir, GENERATED_INGRESS_SECRET_FILE);
    assert.equal(readFileSync(file, "utf8").trim(), result.key!.secret);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.ok(result.key!.secret.length >= 40);
    // The Worker: the key's secret and the platform token (the config never names DISCORD_BOT_TOKEN).
    assert.equal(vars[GENERATED_SECRET_VAR], result.key!.secret);
    assert.equal(vars.DISCORD_BOT_TOKEN, "discord-token-from-shell");
    // The bundled config gets the key, and the Worker's own rule lets it run that account.
    const bundled = parseConfig(result.raw);
    const grant = bundled.companion.ingressKeys.find((key) => key.id === "dev-local");
    assert.deepEqual(grant?.channels, ["discord"]);
    assert.deepEqual(
      accountsForKey(bundled, vars, grant!).map((a) => `${a.channel}/${a.accountId}`),
      ["discord/default"],
    );
    assert.equal(
      raw.channels.discord.dmPolicy,
      "allowlist",
      "the user's config object is not changed",
    );
    assert.equal((raw as Record<string, unknown>).companion, undefined);
    // The companion: its key, the token, its own tuning and PATH; not the model key.
    assert.equal(result.env.EDGECLAW_COMPANION_KEY_ID, "dev-local");
    assert.equal(result.env.EDGECLAW_COMPANION_INGRESS_SECRET, result.key!.secret);
    assert.equal(result.env.DISCORD_BOT_TOKEN, "discord-token-from-shell");
    assert.equal(result.env.EDGECLAW_COMPANION_DEBUG, "1");
    assert.equal(result.env.PATH, "/usr/bin");
    assert.equal(result.env.ANTHROPIC_API_KEY, undefined);

    // The next start on the same data dir reuses the secret.
    const again = planDevCompanion({
      raw,
      config: parseConfig(raw),
      vars: {},
      shellEnv: shell,
      dataDir,
    });
    assert.equal(again?.key?.secret, result.key!.secret);
  });

  it("uses the configured key when its secret is set (.dev.vars wins over the shell for the token), and says which accounts it cannot run", () => {
    const raw = {
      companion: {
        ingressKeys: [
          { id: "dc", secret: { source: "env", id: "MY_COMPANION_SECRET" }, channels: ["discord"] },
        ],
      },
      channels: {
        discord: { token: { source: "env", id: "DISCORD_TOKEN_MAIN" } },
        telegram: { mode: "polling", botToken: "${TELEGRAM_BOT_TOKEN}" },
      },
    };
    const { vars, result } = plan(
      raw,
      { MY_COMPANION_SECRET: "configured-secret", DISCORD_TOKEN_MAIN: "from-dev-vars" },
      { DISCORD_TOKEN_MAIN: "from-shell", TELEGRAM_BOT_TOKEN: "123:tg" },
    );
    assert.ok(result);
    assert.deepEqual(result.key, { id: "dc", secret: "configured-secret", source: "configured" });
    assert.equal(result.raw, raw, "the bundled config is the user's");
    assert.deepEqual(result.accounts, ["Discord"]);
    assert.equal(result.env.DISCORD_TOKEN_MAIN, "from-dev-vars");
    assert.equal(vars[GENERATED_SECRET_VAR], undefined);
    assert.ok(
      result.warnings.some((w) => /Telegram.*ingress key "dc" may not speak for it/.test(w)),
      result.warnings.join("\n"),
    );
  });

  it("falls back to a generated key, with a warning, when the configured key's secret is not set", () => {
    const raw = {
      companion: {
        ingressKeys: [
          {
            id: "dc",
            secret: { source: "env", id: "MY_COMPANION_SECRET" },
            channels: ["telegram"],
          },
        ],
      },
      channels: { telegram: { mode: "polling" } },
    };
    const { vars, result } = plan(raw, {}, {});
    assert.ok(result);
    assert.equal(result.key!.source, "generated");
    assert.ok(result.warnings.some((w) => /ingressKeys "dc": its secret is not set/.test(w)));
    assert.ok(result.warnings.some((w) => /TELEGRAM_BOT_TOKEN is not set/.test(w)));
    const keys = parseConfig(result.raw).companion.ingressKeys;
    assert.deepEqual(
      keys.map((key) => key.id),
      ["dc", "dev-local"],
      "the user's key stays",
    );
    assert.deepEqual(keys[1]!.channels, ["telegram"]);
    assert.ok(vars[GENERATED_SECRET_VAR]);
  });

  it("starts the companion for an agent whose sandbox backend is companion, with no socket account: sandbox only, a generated outbound key the Worker signs with", () => {
    const raw = {
      agents: { list: [{ id: "main" }, { id: "coder", sandbox: { backend: "companion" } }] },
    };
    const { vars, result, dataDir } = plan(raw, {}, { PATH: "/usr/bin", SECRET_IN_SHELL: "x" });
    assert.ok(result, "a companion is planned for the sandbox alone");
    assert.equal(result.key, undefined, "no ingress key: it runs no connector");
    assert.deepEqual(result.accounts, []);
    assert.deepEqual(result.sandbox?.agents, ["coder"]);
    assert.equal(result.env.EDGECLAW_COMPANION_SANDBOX_ONLY, "1");
    assert.equal(result.env.EDGECLAW_COMPANION_OUTBOUND_KEY_ID, "dev-local");
    const secret = result.env.EDGECLAW_COMPANION_OUTBOUND_SECRET;
    assert.ok(secret && secret.length >= 32);
    assert.equal(vars[GENERATED_OUTBOUND_SECRET_VAR], secret, "the Worker gets the same secret");
    assert.equal(result.env.SECRET_IN_SHELL, undefined);
    const companion = parseConfig(result.raw).companion;
    assert.deepEqual(companion.outboundKeys, [
      { id: "dev-local", secret: { source: "env", id: GENERATED_OUTBOUND_SECRET_VAR } },
    ]);
    assert.equal(
      readFileSync(join(dataDir, GENERATED_OUTBOUND_SECRET_FILE), "utf8").trim(),
      secret,
    );
    assert.equal(statSync(join(dataDir, GENERATED_OUTBOUND_SECRET_FILE)).mode & 0o777, 0o600);
    // companion.url: dev points it at the companion it starts.
    assert.equal(
      parseConfig(withCompanionUrl(result.raw, "http://127.0.0.1:9999")).companion.url,
      "http://127.0.0.1:9999",
    );
  });

  it("uses the configured outbound key when its secret is set, and no sandbox companion when no agent's backend is companion", () => {
    const raw = {
      agents: { defaults: { sandbox: { backend: "companion" } } },
      companion: {
        url: "http://127.0.0.1:8790",
        outboundKeys: [{ id: "ob", secret: { source: "env", id: "MY_OUTBOUND" } }],
      },
    };
    const { result } = plan(raw, { MY_OUTBOUND: "from-dev-vars" });
    assert.equal(result?.env.EDGECLAW_COMPANION_OUTBOUND_SECRET, "from-dev-vars");
    assert.equal(result?.env.EDGECLAW_COMPANION_OUTBOUND_KEY_ID, "ob");
    assert.equal(result?.sandbox?.outboundKey.source, "configured");
    assert.equal(result?.sandbox?.configuredUrl, "http://127.0.0.1:8790");
    assert.equal(result?.raw, raw, "the config is bundled as written");
    assert.deepEqual(result?.sandbox?.agents, ["main"]);
    assert.equal(
      plan({ agents: { defaults: { sandbox: { backend: "container" } } } }).result,
      undefined,
    );
  });
  it("gives the Worker an outbound key for a channel whose replies go through the companion (Signal), and none for one that replies by REST (Discord)", () => {
    const { vars, result } = plan(
      { channels: { signal: { account: "+15550001111" } } },
      {},
      { PATH: "/usr/bin" },
    );
    assert.ok(result);
    assert.deepEqual(result.accounts, ["Signal"]);
    assert.equal(result.sandbox, undefined, "no agent's exec runs there");
    assert.equal(result.outbound?.outboundKey.source, "generated");
    assert.equal(result.outbound?.configuredUrl, undefined, "dev points companion.url at its own");
    const secret = result.env.EDGECLAW_COMPANION_OUTBOUND_SECRET;
    assert.ok(secret && secret.length >= 32, "the companion verifies the Worker's replies");
    assert.equal(vars[GENERATED_OUTBOUND_SECRET_VAR], secret, "the Worker signs with the same");
    assert.deepEqual(parseConfig(result.raw).companion.outboundKeys, [
      { id: "dev-local", secret: { source: "env", id: GENERATED_OUTBOUND_SECRET_VAR } },
    ]);

    const rest = plan({ channels: { discord: {} } }, {}, { DISCORD_BOT_TOKEN: "t" }).result;
    assert.ok(rest);
    assert.equal(rest.outbound, undefined);
    assert.equal(rest.env.EDGECLAW_COMPANION_OUTBOUND_SECRET, undefined);
  });
});
