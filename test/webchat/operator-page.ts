import { SELF } from "cloudflare:test";
import { expect } from "vitest";
import { TOKEN } from "../openai/scripted-sessions.ts";

/**
 * What every operator page (web chat, control page) must be when served: HTML that is never cached,
 * whose one script and one style block run only by this response's nonce under a CSP that allows
 * this origin and nothing else (no framing), that loads nothing from elsewhere and holds no token.
 * Checked here once; each page's test adds what is its own.
 */
export async function fetchOperatorPage(path: string): Promise<{ html: string; csp: string }> {
  const response = await SELF.fetch(`https://edgeclaw.test${path}`);
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
  // Dependency-free: nothing is loaded from anywhere else.
  expect(html).not.toMatch(/<script[^>]+src=/);
  expect(html).not.toMatch(/<link[^>]+href="(?!data:)/);
  expect(html).not.toContain(TOKEN);
  return { html, csp };
}
