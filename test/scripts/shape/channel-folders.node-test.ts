import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, it } from "node:test";
import { channelIds } from "../../../functions/channels/gateway-config.ts";
import { channelManifests } from "../../../functions/channels/manifests.ts";
import { projectRoot } from "../helpers.ts";
import { channelsNamed } from "./channel-names.ts";
import { importGraph, runtimeClosure, runtimePath, sourceFiles } from "./import-graph.ts";

/**
 * Issue 19 step 3, "a channel is one folder": adding a channel touches its folder
 * (functions/channels/<id>/), the registry's line and the docs navigation — nothing under these
 * folders. So no file here names a channel id in code (channel-names.ts says what counts); what
 * reads a channel's pieces goes through the registry (scripts/lib/channel-pieces.ts, the
 * companion's connectors/index.ts, the channel definitions).
 */
const GENERIC = ["workers", "durable-objects", "scripts", "companion/src", "test/setup"];

/**
 * What still names a channel, each with why. The list may only shrink: an entry no longer needed
 * fails too, so it is deleted when the step that removes it lands.
 */
const ALLOWED: Record<string, { channels: string[]; why: string }> = {
  "scripts/bench/memory.ts": {
    channels: ["slack"],
    why: "a benchmark of the memory path needs one concrete channel to send through; it stays Slack on purpose",
  },
  "scripts/bench/message-cost.ts": {
    channels: ["slack"],
    why: "the per-message cost bench sends one plain Slack message on purpose (its figures are Slack's)",
  },
  "scripts/bench/metrics-overhead.ts": {
    channels: ["slack"],
    why: "the metrics-overhead bench drives Slack webhooks on purpose (its baseline is Slack's)",
  },
  "durable-objects/sandbox/loopback-container.ts": {
    channels: ["signal"],
    why: "the container engine's `signal` route sends a process signal, not Signal",
  },
  "scripts/lib/local-worker.mjs": {
    channels: ["line"],
    why: "readline's 'line' event, not LINE",
  },
  "scripts/test-workerd.ts": {
    channels: ["line"],
    why: "readline's 'line' event, not LINE",
  },
};

/** A channel's Node-only pieces, and the fixtures its tests share with its test kit: never in the Worker's bundle. */
const NODE_ONLY_PIECE =
  /^functions\/channels\/[^/]+\/(simulate\/|companion\/|cli\.ts$|test-kit\.ts$|test-fixtures\.ts$)/;

describe("a channel is one folder", () => {
  const ids = channelIds();

  it("no file under workers/, durable-objects/, scripts/, companion/src/ or test/setup/ names a channel, beyond the list", () => {
    assert.ok(ids.length >= 9, `only ${ids.length} channels registered`);
    const files = sourceFiles(GENERIC);
    assert.ok(files.length > 100, `read only ${files.length} files`);
    const found: Record<string, string[]> = {};
    const unexpected: string[] = [];
    for (const file of files) {
      const named = channelsNamed(file, readFileSync(join(projectRoot, file), "utf8"), ids);
      if (named.size === 0) continue;
      found[file] = [...named.keys()];
      const allowed = new Set(ALLOWED[file]?.channels ?? []);
      for (const [id, token] of named)
        if (!allowed.has(id)) unexpected.push(`${file} names ${id} (${token})`);
    }
    assert.deepEqual(
      unexpected,
      [],
      "go through the registry, or list the file in ALLOWED with why",
    );
    const stale = Object.entries(ALLOWED).flatMap(([file, entry]) =>
      entry.channels
        .filter((id) => !found[file]?.includes(id))
        .map((id) => `${file}: ${id} is no longer named; remove it from ALLOWED`),
    );
    assert.deepEqual(stale, []);
  });

  it("the Worker's bundle loads no simulator, fake, companion connector, CLI or test kit", () => {
    const graph = importGraph();
    const closure = [...runtimeClosure(graph, "workers/index.ts")];
    assert.ok(
      closure.includes("functions/channels/slack/index.ts"),
      "the closure reaches the channels",
    );
    const offenders = closure
      .filter((file) => NODE_ONLY_PIECE.test(file))
      .map((file) => runtimePath(graph, "workers/index.ts", file).join(" → "));
    assert.deepEqual(offenders, []);
  });

  it("each channel's manifest names its docs page, and the docs navigation links it by its label", () => {
    const navigation = readFileSync(join(projectRoot, "docs/README.md"), "utf8");
    const problems = channelManifests.flatMap((manifest) => {
      if (!existsSync(join(projectRoot, manifest.docsPage)))
        return [`${manifest.id}: ${manifest.docsPage} does not exist`];
      const link = `[${manifest.label}](${relative("docs", manifest.docsPage)})`;
      return navigation.includes(link) ? [] : [`${manifest.id}: docs/README.md has no ${link}`];
    });
    assert.deepEqual(problems, []);
    assert.deepEqual(
      channelManifests.map((manifest) => manifest.id),
      ids,
      "the manifests are the registry's channels, in its order",
    );
  });

  it("the rule sees a channel named in code and nowhere else", () => {
    const source = [
      `import { a } from "../functions/channels/discord/api.ts";`,
      `const b = startFakeSlackApi;`,
      `const c = { path: "/line/webhook", d: "googlechat" };`,
      `const e = process.env.TEST_TWILIO_TOKEN;`,
      `// Telegram, Feishu and Microsoft Teams in a comment`,
      `const f = "MS Teams is down: try again";`,
      `for (const line of lines) KILL_SLACK_MS + line.length;`,
    ].join("\n");
    assert.deepEqual([...channelsNamed("example.ts", source, ids).keys()].sort(), [
      "discord",
      "googlechat",
      "line",
      "slack",
      "sms",
    ]);
  });
});
