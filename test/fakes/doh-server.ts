import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { listenOnLoopback } from "../../scripts/simulate/fakes/listen.ts";

/**
 * A DNS-over-HTTPS resolver on loopback speaking the JSON API (`GET /dns-query?name=&type=A|AAAA`,
 * `accept: application/dns-json` → `{ Status, Answer: [{ name, type, TTL, data }] }`), answering
 * from the fixed zone below; any other name is NXDOMAIN (Status 3). `broken.ssrf.test` makes it
 * answer HTTP 500. Every other path answers 200 "landing" (a second loopback host for redirect tests).
 * Control: GET /_control/requests (path + headers of everything asked), POST /_control/reset.
 */

/** name → A and AAAA answers (a CNAME in front where `cname` is set). */
export const FAKE_DNS_ZONE: Record<string, { A?: string[]; AAAA?: string[]; cname?: string }> = {
  "loopback.ssrf.test": { A: ["127.0.0.1"] },
  "private.ssrf.test": { A: ["10.1.2.3"] },
  "cgnat.ssrf.test": { A: ["100.64.0.7"] },
  "metadata.ssrf.test": { A: ["169.254.169.254"] },
  "v6loopback.ssrf.test": { AAAA: ["::1"] },
  "ula.ssrf.test": { AAAA: ["fd00::1"] },
  "mixed.ssrf.test": { A: ["93.184.216.34"], AAAA: ["fd00::1"] },
  "alias.ssrf.test": { cname: "inner.ssrf.test", A: ["10.0.0.5"] },
  "public.ssrf.test": { A: ["93.184.216.34"], AAAA: ["2606:2800:220:1:248:1893:25c8:1946"] },
  "empty.ssrf.test": {},
};

export interface FakeDohServer {
  url: string;
  stop(): Promise<void>;
}

export async function startFakeDohServer(): Promise<FakeDohServer> {
  let requests: Array<{ path: string; headers: IncomingMessage["headers"] }> = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://fake");
    if (url.pathname === "/_control/requests") return json(res, 200, requests);
    if (url.pathname === "/_control/reset") {
      requests = [];
      return json(res, 200, { ok: true });
    }
    requests.push({ path: url.pathname + url.search, headers: req.headers });
    if (url.pathname !== "/dns-query") {
      res.writeHead(200, { "content-type": "text/plain" });
      return res.end("landing");
    }
    const name = (url.searchParams.get("name") ?? "").toLowerCase().replace(/\.$/, "");
    const type = url.searchParams.get("type") ?? "A";
    if (name === "broken.ssrf.test") return json(res, 500, { error: "resolver down" });
    const zone = FAKE_DNS_ZONE[name];
    const question = [{ name: `${name}.`, type: type === "AAAA" ? 28 : 1 }];
    if (!zone)
      return json(res, 200, {
        Status: 3,
        TC: false,
        RD: true,
        RA: true,
        AD: false,
        CD: false,
        Question: question,
      });
    const owner = zone.cname ?? name;
    const answer = [
      ...(zone.cname ? [{ name: `${name}.`, type: 5, TTL: 60, data: `${zone.cname}.` }] : []),
      ...((type === "AAAA" ? zone.AAAA : zone.A) ?? []).map((data) => ({
        name: `${owner}.`,
        type: type === "AAAA" ? 28 : 1,
        TTL: 60,
        data,
      })),
    ];
    return json(res, 200, {
      Status: 0,
      TC: false,
      RD: true,
      RA: true,
      AD: false,
      CD: false,
      Question: question,
      ...(answer.length ? { Answer: answer } : {}),
    });
  });
  return listenOnLoopback(server);
}

function json(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { "content-type": "application/dns-json" });
  res.end(JSON.stringify(body));
}
