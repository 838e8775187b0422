import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, it } from "node:test";
import { checkConfig } from "../../functions/routing/config-check.ts";
import { projectRoot, tempProject, tsxCli } from "./helpers.ts";

/**
 * A USD cap over a model with no price refuses that model's calls (issue 18, item 3): the config
 * check (CLI `config check`, the admin API and control page, `npm run config:check`) names every
 * capped scope and the unpriced models, with the key that prices them. Built-in default models are
 * priced, and a catalog `cost` prices its model.
 */
const unpricedConfig = {
  agents: {
    defaults: { model: { primary: "local/llama", fallbacks: ["anthropic/claude-sonnet-5"] } },
    list: [{ id: "ops", model: { primary: "openai/gpt-unlisted" } }],
  },
  models: {
    providers: {
      local: {
        baseUrl: "http://127.0.0.1:11434/v1",
        models: [{ id: "llama" }, { id: "priced", cost: { input: 0, output: 0 } }],
      },
    },
  },
  budgets: {
    global: { month: { usd: 100 } },
    agents: { ops: { day: { usd: 1, tokens: 50_000 } } },
    session: { day: { tokens: 10_000 } },
    sender: { day: { usd: 0.5 }, month: { usd: 5 } },
  },
};

function unpricedLines(warnings: string[]): string[] {
  return warnings.filter((line) => line.includes("no price"));
}

describe("config check: USD caps over models with no price", () => {
  it("names every USD-capped scope and every unpriced model, with the key that prices it", () => {
    const report = checkConfig(unpricedConfig, {});
    assert.ok(report.ok, report.errors.join("\n"));
    const lines = unpricedLines(report.warnings);
    assert.deepEqual(
      lines.map((line) => line.split(" ")[0]),
      ["budgets.global", "budgets.agents.ops", "budgets.sender"],
      report.warnings.join("\n"),
    );
    assert.match(lines[2]!, /^budgets\.sender caps USD per day and per month, but /);
    for (const line of lines) {
      assert.match(line, /local\/llama, openai\/gpt-unlisted have no price/);
      assert.match(line, /their calls are refused under this cap/);
      assert.match(
        line,
        /set models\.providers\.local\.models\[\]\.cost, models\.providers\.openai\.models\[\]\.cost/,
      );
      assert.match(line, /budgets\.allowUnpricedModels: true$/);
      // Priced: the built-in default model and the catalog entry with a cost (even $0).
      assert.doesNotMatch(line, /claude-sonnet-5|local\/priced/);
    }
  });

  it("says a USD cap does not limit them once budgets.allowUnpricedModels is set", () => {
    const report = checkConfig(
      { ...unpricedConfig, budgets: { allowUnpricedModels: true, session: { day: { usd: 1 } } } },
      {},
    );
    assert.ok(report.ok, report.errors.join("\n"));
    const lines = unpricedLines(report.warnings);
    assert.equal(lines.length, 1, report.warnings.join("\n"));
    assert.match(
      lines[0]!,
      /^budgets\.session caps USD per day, .*budgets\.allowUnpricedModels lets those calls through at \$0, so this cap does not limit them/,
    );
  });

  it("is quiet when every model is priced or no scope caps USD", () => {
    const priced = checkConfig(
      {
        agents: { defaults: { model: { primary: "openai/gpt-5.6-sol" } } },
        budgets: { global: { day: { usd: 10 } } },
      },
      {},
    );
    assert.deepEqual(unpricedLines(priced.warnings), []);
    const tokensOnly = checkConfig(
      { ...unpricedConfig, budgets: { session: { day: { tokens: 10_000 } } } },
      {},
    );
    assert.deepEqual(unpricedLines(tokensOnly.warnings), []);
  });

  it("npm run config:check prints the same warning for the config file", () => {
    const cwd = tempProject({ "edgeclaw.json5": JSON.stringify(unpricedConfig) });
    const run = spawnSync(
      process.execPath,
      [tsxCli, join(projectRoot, "scripts", "config-check.ts")],
      { cwd, encoding: "utf8", env: { ...process.env, EDGECLAW_CONFIG: "" } },
    );
    assert.equal(run.status, 0, run.stderr);
    assert.match(
      run.stderr,
      /^warning: budgets\.global caps USD per month, but local\/llama, openai\/gpt-unlisted have no price/m,
    );
    assert.match(run.stdout, /^config OK/m);
  });
});
