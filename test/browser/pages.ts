import { fakeWebUrl } from "../agent/tools/context.ts";

/**
 * The test's own pages, served on loopback by the fake web server (test/fakes/web-server.ts) at
 * paths unique to one test, with what the browser sent them readable back (its request log).
 */

export interface SitePage {
  path: string;
  body: string;
  status?: number;
  headers?: Record<string, string>;
  /** Answer this much later (the request is logged at once). */
  delayMs?: number;
}

export async function servePages(pages: SitePage[]): Promise<string> {
  const base = fakeWebUrl();
  for (const page of pages) {
    const res = await fetch(`${base}/_control/route`, {
      method: "POST",
      body: JSON.stringify({
        path: page.path,
        status: page.status ?? 200,
        headers: { "content-type": "text/html; charset=utf-8", ...page.headers },
        body: page.body,
        delayMs: page.delayMs ?? 0,
      }),
    });
    if (!res.ok) throw new Error(`scripting ${page.path}: ${res.status}`);
  }
  return base;
}

export interface LoggedRequest {
  method: string;
  path: string;
  body?: string;
}

export async function requestsTo(path: string): Promise<LoggedRequest[]> {
  const res = await fetch(`${fakeWebUrl()}/_control/requests`);
  const all = (await res.json()) as LoggedRequest[];
  return all.filter((request) => request.path.split("?")[0] === path);
}

export function uniquePrefix(name: string): string {
  return `/browser-${name}-${crypto.randomUUID().slice(0, 8)}`;
}

/** A page of one form: a name, a quantity to choose, and a submit button posting to `action`. */
export function orderForm(action: string): string {
  return `<!doctype html><html><head><title>Order</title></head><body>
<h1>Order otters</h1>
<form method="post" action="${action}">
  <label>Name <input name="name" type="text"></label>
  <label>Quantity <select name="qty"><option>1</option><option>2</option><option>3</option></select></label>
  <button type="submit">Place order</button>
</form></body></html>`;
}

/** A sign-in page posting to `action`, which answers with a session cookie and a redirect. */
export function loginForm(action: string): string {
  return `<!doctype html><html><head><title>Sign in</title></head><body>
<h1>Sign in</h1>
<form method="post" action="${action}">
  <label>Username <input name="user" type="text" autocomplete="username"></label>
  <label>Password <input name="pass" type="password" autocomplete="current-password"></label>
  <button type="submit">Sign in</button>
</form></body></html>`;
}

/** A page whose link opens `target` in a new tab. */
export function linkPage(target: string): string {
  return `<!doctype html><html><head><title>Start</title></head><body>
<h1>Start here</h1><p><a href="${target}" target="_blank">Open the report</a></p></body></html>`;
}
