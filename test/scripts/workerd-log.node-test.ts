import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { workerdLogFilter } from "../../scripts/lib/workerd-log.mjs";

/** What the dev terminal shows of workerd's own lines (scripts/lib/workerd-log.mjs). */
describe("workerd log filter", () => {
  it("drops the inspector's start-up note that came before dev's banner, and passes real lines", () => {
    const filter = workerdLogFilter();
    assert.equal(
      filter("workerd/server/factory/worker-factory-rpc.c++:545: info: Inspector is listening"),
      undefined,
    );
    const warning = "workerd/io/worker.c++:2484: warning: something the operator should see";
    assert.equal(filter(warning), warning);
    assert.equal(filter('{"level":"warn","msg":"x"}'), '{"level":"warn","msg":"x"}');
  });

  it("keeps one short line per connection failure", () => {
    const filter = workerdLogFilter(() => 1000);
    const dns =
      "workerd/jsg/util.c++:1: info: DNS lookup failed.; params.host = nowhere.invalid; gai_strerror(status) = Name or service not known";
    assert.equal(
      filter(dns),
      "workerd: DNS lookup failed for nowhere.invalid (Name or service not known)",
    );
    assert.equal(filter(dns), undefined);
  });
});
