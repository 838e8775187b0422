import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { TOKEN } from "../openai/scripted-sessions.ts";

/** The control page's envelope; what it does in a browser is test/scripts/control-page.node-test.ts. */
describe("control page", () => {
  it("serves a self-contained page under a per-response nonce, holding no data and no token", async () => {
    const response = await SELF.fetch("https://edgeclaw.test/control");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/html");
    expect(response.headers.get("cache-control")).toBe("no-store");
    const csp = response.headers.get("content-security-policy") ?? "";
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1];
    expect(nonce).toBeTruthy();
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    const html = await response.text();
    expect(html).toContain(`<script nonce="${nonce}">`);
    expect(html).toContain(`<style nonce="${nonce}">`);
    expect(html).not.toContain("__NONCE__");
    expect(html).not.toMatch(/<script[^>]+src=/);
    expect(html).not.toMatch(/<link[^>]+href="(?!data:)/);
    // The token lives in the tab's sessionStorage, never localStorage (which outlives the tab).
    expect(html).toContain("sessionStorage");
    expect(html).not.toContain("localStorage");
    expect(html).not.toContain(TOKEN);
    // The view scripts made it into the page (String.raw blocks joined by page.ts).
    for (const path of ["/admin/sessions", "/admin/pairing", "/admin/dead-letters", "/admin/cron", "/admin/spend", "/admin/budgets", "/admin/channels/status", "/admin/config/report"]) {
      expect(html).toContain(path);
    }
  });
});
