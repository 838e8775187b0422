import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { readBody } from "../../scripts/simulate/fakes/read-body.ts";
import { answerSearchApi } from "./search-api.ts";

/**
 * A small web site on loopback for `web_fetch` tests: a few fixed pages plus routes a test can
 * script. Control endpoints:
 *   POST /_control/route    {path, status?, headers?, body?, delayMs?}  serve this at `path`
 *   GET  /_control/requests                                             what was requested (path + headers)
 *   POST /_control/reset                                                forget scripted routes and requests
 * Fixed pages: /article.html, /plain.txt, /data.json, /image.png, /big.txt (2 MB), /slow (never
 * finishes within a test), /redirect?to=<url>&status=<code>, /hops/<n> (a chain of n redirects).
 * Under /search-api/<provider>/ it also plays the web-search providers (search-api.ts).
 */

interface ScriptedRoute {
  status: number;
  headers: Record<string, string>;
  body: string;
  delayMs: number;
}

interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** A POST's body, as sent. */
  body?: string;
}

export interface FakeWebServer {
  url: string;
  stop(): Promise<void>;
}

export const ARTICLE_HTML = `<!doctype html>
<html><head><title>Otters &amp; Rivers</title><style>body{color:red}</style>
<script>window.secret = "script text must not appear";</script></head>
<body>
<nav><a href="/home">Home</a> | <a href="/about">About</a> NAVIGATION-NOISE</nav>
<main>
<article>
<h1>River otters</h1>
<p>River otters are <strong>semi-aquatic</strong> mammals &mdash; they hunt fish &amp; crayfish.
They can hold their breath for up to eight minutes while diving.</p>
<h2>Habitat</h2>
<ul><li>Rivers and lakes</li><li>Coastal marshes</li></ul>
<p>Read <a href="https://example.org/otters">the full field guide</a> for more.</p>
<pre><code>otter.swim();
  otter.dive();</code></pre>
<p>Otters use &lt;tools&gt; such as rocks to open shells; this sentence pads the article so that the
main-content extractor prefers it over the page chrome around it.</p>
</article>
</main>
<footer>FOOTER-NOISE copyright</footer>
</body></html>`;

export async function startFakeWebServer(): Promise<FakeWebServer> {
  const routes = new Map<string, ScriptedRoute>();
  const requests: RecordedRequest[] = [];

  const server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => {
      res.statusCode = 500;
      res.end(String(error));
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://fake.local");
    if (url.pathname.startsWith("/_control/")) return control(url, req, res);
    const body = req.method === "POST" ? await readBody(req) : undefined;
    requests.push({
      method: req.method ?? "GET",
      path: url.pathname + url.search,
      headers: req.headers,
      ...(body !== undefined ? { body } : {}),
    });

    if (url.pathname.startsWith("/search-api/")) {
      const answer = answerSearchApi(url, req.method ?? "GET", req.headers, body ?? "");
      if (answer) {
        if (answer.delayMs) await new Promise((resolve) => setTimeout(resolve, answer.delayMs));
        res.writeHead(answer.status, answer.headers);
        res.end(answer.body);
        return;
      }
    }

    const scripted = routes.get(url.pathname);
    if (scripted) {
      if (scripted.delayMs) await new Promise((resolve) => setTimeout(resolve, scripted.delayMs));
      res.writeHead(scripted.status, scripted.headers);
      res.end(scripted.body);
      return;
    }
    switch (url.pathname) {
      case "/article.html":
        return send(res, 200, "text/html; charset=utf-8", ARTICLE_HTML);
      case "/plain.txt":
        return send(res, 200, "text/plain; charset=utf-8", "just plain text\nsecond line");
      case "/data.json":
        return send(res, 200, "application/json", '{"otters":3,"habitat":["river","coast"]}');
      case "/image.png":
        return send(res, 200, "image/png", "\u0089PNG fake bytes");
      case "/big.txt":
        return send(res, 200, "text/plain", "0123456789".repeat(200_000));
      case "/slow":
        res.writeHead(200, { "content-type": "text/plain" });
        res.write("partial");
        return; // never ends; the client's timeout has to fire
      case "/redirect": {
        const status = Number(url.searchParams.get("status") ?? "302");
        res.writeHead(status, { location: url.searchParams.get("to") ?? "/article.html" });
        res.end();
        return;
      }
      default: {
        const hops = /^\/hops\/(\d+)$/.exec(url.pathname);
        if (hops) {
          const left = Number(hops[1]);
          res.writeHead(302, { location: left > 0 ? `/hops/${left - 1}` : "/plain.txt" });
          res.end();
          return;
        }
        return send(
          res,
          404,
          "text/html",
          "<html><body><h1>Not found</h1><p>No such page.</p></body></html>",
        );
      }
    }
  }

  async function control(url: URL, req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (url.pathname === "/_control/requests")
      return send(res, 200, "application/json", JSON.stringify(requests));
    if (url.pathname === "/_control/reset") {
      routes.clear();
      requests.length = 0;
      return send(res, 200, "application/json", "{}");
    }
    if (url.pathname === "/_control/route" && req.method === "POST") {
      const body = JSON.parse(await readBody(req)) as Partial<ScriptedRoute> & { path?: string };
      if (!body.path) return send(res, 400, "text/plain", "path required");
      routes.set(body.path, {
        status: body.status ?? 200,
        headers: body.headers ?? {},
        body: body.body ?? "",
        delayMs: body.delayMs ?? 0,
      });
      return send(res, 200, "application/json", "{}");
    }
    return send(res, 404, "text/plain", "unknown control endpoint");
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function send(res: ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, { "content-type": contentType });
  res.end(body);
}
