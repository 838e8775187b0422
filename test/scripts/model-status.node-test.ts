import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { parseConfig } from "../../functions/channels/gateway-config.ts";
import { parseConfigText } from "../../scripts/lib/config-file.ts";
import { activeModelLine } from "../../scripts/lib/model-status.ts";
import { projectRoot } from "./helpers.ts";

/** The dev banner's Model line names the model that answers, as the Worker picks it. */
describe("the dev banner's model line", () => {
  const example = parseConfig(
    parseConfigText(readFileSync(join(projectRoot, "edgeclaw.example.json5"), "utf8"), "example"),
  );

  it("with edgeclaw.example.json5 and EDGECLAW_FAKE_MODEL=1, names the demo model and what it replaces", () => {
    const line = activeModelLine(example, { EDGECLAW_FAKE_MODEL: "1" });
    assert.equal(
      line,
      "  Model: fake/edgeclaw-demo (the scripted demo model, EDGECLAW_FAKE_MODEL=1; answers instead of anthropic/claude-sonnet-4-5 from the config)",
    );
  });

  it("without the switch, names the config's model", () => {
    const line = activeModelLine(example, { ANTHROPIC_API_KEY: "sk-ant-x" });
    assert.match(line, /^ {2}Model: anthropic\/claude-sonnet-4-5 \(from the config\), then openai/);
  });
});
