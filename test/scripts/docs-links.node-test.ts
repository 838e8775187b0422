import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { brokenLinks, headingAnchors, missingPaths } from "../../scripts/docs/links.ts";
import { projectRoot, tempProject } from "./helpers.ts";

describe("docs links", () => {
  it("every relative link in README.md and docs/ resolves to a file and, with #, a heading", () => {
    const broken = brokenLinks(projectRoot).map(
      (b) => `${b.file}:${b.line}: ${b.target} — ${b.reason}`,
    );
    assert.deepEqual(broken, []);
  });

  it("every repository file README.md and docs/ name in their text exists", () => {
    const missing = missingPaths(projectRoot).map((m) => `${m.file}:${m.line}: ${m.target}`);
    assert.deepEqual(missing, []);
  });

  it("finds a named file that was moved, and leaves placeholders and build output alone", () => {
    const root = tempProject({
      "README.md":
        "The handler is workers/webhooks.ts; `functions/channels/<id>/index.ts`, companion/dist/main.js.\n",
      "docs/a.md": "See `durable-objects/session/run.ts` and scripts/docs/gen.ts.\n",
      "workers/webhooks.ts": "",
      "scripts/docs/gen.ts": "",
    });
    assert.deepEqual(
      missingPaths(root).map((m) => `${m.file}:${m.line} ${m.target}`),
      ["docs/a.md:1 durable-objects/session/run.ts"],
    );
  });

  it("finds a missing page, a missing heading and a link out of the repository", () => {
    const root = tempProject({
      "README.md": "[a](docs/a.md) [gone](docs/gone.md) [up](../elsewhere.md) `[code](x.md)`\n",
      "docs/a.md":
        "# Page A\n\n## Cost & budgets\n\n[ok](#cost--budgets) [bad](#nope) [self](../README.md)\n",
    });
    const found = brokenLinks(root).map((b) => `${b.file}:${b.line} ${b.target} ${b.reason}`);
    assert.deepEqual(found, [
      "README.md:1 docs/gone.md no such file",
      "README.md:1 ../elsewhere.md points outside the repository",
      "docs/a.md:5 #nope no heading #nope there",
    ]);
  });

  it("numbers repeated headings and drops punctuation the way GitHub does", () => {
    const anchors = headingAnchors(
      "# Slack Socket Mode (no public URL)\n## Notes\n## Notes\n```\n# not a heading\n```\n## `channels.<id>`\n",
    );
    assert.deepEqual(
      [...anchors],
      ["slack-socket-mode-no-public-url", "notes", "notes-1", "channelsid"],
    );
  });
});
