/**
 * Whether `href` is on a download allowlist. Entries are host names (`cdn.discordapp.com`), `*.`
 * wildcards (`*.sharepoint.com`; never the bare domain) — both HTTPS on the default port only — or
 * full origins (`http://127.0.0.1:8787`, for proxies and tests) that match that origin exactly. A URL
 * with credentials in it never matches.
 */
export function urlOnAllowlist(href: string, allowlist: readonly string[]): boolean {
  let url: URL;
  try {
    url = new URL(href);
  } catch {
    return false;
  }
  if (url.username || url.password) return false;
  for (const entry of allowlist) {
    if (entry.includes("://")) {
      try {
        if (new URL(entry).origin === url.origin) return true;
      } catch {
        // not a URL: never matches
      }
      continue;
    }
    if (url.protocol !== "https:" || url.port) continue;
    const host = url.hostname.toLowerCase();
    const pattern = entry.toLowerCase();
    if (
      pattern.startsWith("*.")
        ? host.endsWith(pattern.slice(1)) && host.length > pattern.length - 1
        : host === pattern
    )
      return true;
  }
  return false;
}
