import { createServer } from "node:http";
import { listenOnLoopback } from "../../scripts/simulate/fakes/listen.ts";

/**
 * A fake OpenTelemetry collector: accepts OTLP/HTTP JSON on POST /v1/traces (answering 200 `{}` as a
 * collector does) and keeps every request it got — headers and body — for the test to read.
 */
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Array<{ key: string; value: Record<string, unknown> }>;
  status?: { code?: number };
}

export interface FakeOtlpCollector {
  url: string;
  requests: Array<{
    path: string;
    headers: Record<string, string | string[] | undefined>;
    raw: string;
  }>;
  spans(): Array<OtlpSpan & { service: string }>;
  stop(): Promise<void>;
}

export async function startFakeOtlpCollector(): Promise<FakeOtlpCollector> {
  const requests: FakeOtlpCollector["requests"] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      if (
        req.method !== "POST" ||
        req.url !== "/v1/traces" ||
        !String(req.headers["content-type"]).startsWith("application/json")
      ) {
        res.writeHead(404).end();
        return;
      }
      try {
        JSON.parse(raw);
      } catch {
        res.writeHead(400).end();
        return;
      }
      requests.push({ path: req.url, headers: req.headers, raw });
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  const { url, stop } = await listenOnLoopback(server);
  return {
    url,
    requests,
    spans() {
      return requests.flatMap((request) => {
        const body = JSON.parse(request.raw) as {
          resourceSpans: Array<{
            resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> };
            scopeSpans: Array<{ spans: OtlpSpan[] }>;
          }>;
        };
        return body.resourceSpans.flatMap((resource) => {
          const service =
            resource.resource.attributes.find((a) => a.key === "service.name")?.value.stringValue ??
            "";
          return resource.scopeSpans.flatMap((scope) =>
            scope.spans.map((span) => ({ ...span, service })),
          );
        });
      });
    },
    stop,
  };
}
