import { describe, expect, it } from "vitest";
import { fetchOperatorPage } from "./operator-page.ts";

/** The control page's envelope; what it does in a browser is test/scripts/control-page.node-test.ts. */
describe("control page", () => {
  it("serves a self-contained page under a per-response nonce, holding no data and no token", async () => {
    const { html } = await fetchOperatorPage("/control");
    // The token lives in the tab's sessionStorage, never localStorage (which outlives the tab).
    expect(html).toContain("sessionStorage");
    expect(html).not.toContain("localStorage");
    // The view scripts made it into the page (String.raw blocks joined by page.ts).
    for (const path of [
      "/admin/sessions",
      "/admin/pairing",
      "/admin/dead-letters",
      "/admin/cron",
      "/admin/spend",
      "/admin/budgets",
      "/admin/channels/status",
      "/admin/config/report",
    ]) {
      expect(html).toContain(path);
    }
  });
});
