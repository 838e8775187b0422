import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { projectRoot } from "./helpers.ts";
import { after, before, describe, it } from "node:test";
import { signSlackRequest } from "../../functions/channels/slack/verify.ts";
import { startDevInstance, type DevInstance } from "../../scripts/bench/lib/dev-instance.ts";
import { startFakeOtlpCollector, type FakeOtlpCollector } from "../fakes/otlp-collector.ts";
import {
  startFakeSlackApi,
  type FakeSlackApi,
} from "../../functions/channels/slack/simulate/slack-api.ts";

/**
 * Observability end to end on a stack of its own (`npm run dev`: workerd, Durable Objects, PGlite),
 * with the defaults a user gets (metrics coalescing and flush intervals, redaction on): after a run
 * of Slack events the /metrics scrape matches exactly what was sent, the OTLP collector received
 * run/model/tool spans with the right attributes and no message text, and no configured secret
 * appears anywhere in the instance's log.
 */
const SECRETS = {
  OBS_GATEWAY_TOKEN: "obs-gateway-token-5d1c9e7a33",
  OBS_METRICS_TOKEN: "obs-metrics-token-81f0b2c6d4",
  OBS_SLACK_BOT_TOKEN: "xoxb-obs-7731-5520-Q9wErTyUiOp",
  OBS_SLACK_SIGNING_SECRET: "obs-signing-secret-0a9b8c7d6e",
  OBS_OTEL_TENANT: "obs-otel-tenant-secret-4e5f6a",
};
const TEXTS = [
  "session status please, my locker code is 5512-ALPHA",
  "what is the capital of Peru, asks Wilhelmina",
  "remind me that Bartholomew owes me 40 euros",
];

let slack: FakeSlackApi;
let collector: FakeOtlpCollector;
let instance: DevInstance;

before(async () => {
  slack = await startFakeSlackApi();
  collector = await startFakeOtlpCollector();
  const ref = (id: keyof typeof SECRETS) => ({ source: "env", id });
  instance = await startDevInstance(
    {
      gateway: { auth: { token: ref("OBS_GATEWAY_TOKEN") } },
      session: { dmScope: "per-channel-peer" },
      channels: {
        slack: {
          mode: "http",
          apiBaseUrl: `${slack.url}/api/`,
          botToken: ref("OBS_SLACK_BOT_TOKEN"),
          signingSecret: ref("OBS_SLACK_SIGNING_SECRET"),
          dmPolicy: "open",
          allowFrom: ["*"],
          streaming: { mode: "off" },
        },
      },
      diagnostics: {
        metrics: { token: ref("OBS_METRICS_TOKEN") },
        otel: {
          enabled: true,
          endpoint: collector.url,
          headers: { "x-tenant": ref("OBS_OTEL_TENANT") },
        },
      },
    },
    { ...SECRETS, EDGECLAW_FAKE_MODEL: "1" },
  );
});

after(async () => {
  await instance?.stop();
  await collector?.stop();
  await slack?.stop();
});

const run = Date.now().toString(36).toUpperCase();
function dm(i: number): string {
  return JSON.stringify({
    type: "event_callback",
    team_id: "TOBS",
    api_app_id: "AOBS",
    event_id: `Ev${run}${i}`,
    event_time: Math.floor(Date.now() / 1000),
    event: {
      type: "message",
      channel: `D${run}${i}`,
      channel_type: "im",
      user: `U${run}${i}`,
      text: TEXTS[i],
      ts: `1700000000.00000${i}`,
    },
  });
}

async function post(body: string, secret = SECRETS.OBS_SLACK_SIGNING_SECRET): Promise<number> {
  const timestamp = String(Math.floor(Date.now() / 1000));
  const res = await fetch(`${instance.url}/slack/events`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-slack-request-timestamp": timestamp,
      "x-slack-signature": await signSlackRequest(secret, timestamp, body),
    },
    body,
  });
  await res.arrayBuffer();
  return res.status;
}

async function scrape(token: string): Promise<Map<string, number>> {
  const res = await fetch(`${instance.url}/metrics`, {
    headers: { authorization: `Bearer ${token}` },
  });
  assert.equal(res.status, 200);
  const values = new Map<string, number>();
  for (const line of (await res.text()).split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const at = line.lastIndexOf(" ");
    values.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return values;
}

async function eventually<T>(
  what: string,
  probe: () => Promise<T>,
  ok: (value: T) => boolean,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last = await probe();
  while (!ok(last)) {
    if (Date.now() > deadline)
      assert.fail(`${what}: still ${JSON.stringify(last instanceof Map ? [...last] : last)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
    last = await probe();
  }
  return last;
}

describe("observability end to end", () => {
  it("scrapes exactly what was sent, exports spans without text, and logs no secret", async () => {
    for (let i = 0; i < TEXTS.length; i++) assert.equal(await post(dm(i)), 200);
    assert.equal(await post(dm(0)), 200, "a retry of the first event is acked");
    assert.equal(await post(dm(1), "wrong-secret"), 401);
    assert.equal(await post(JSON.stringify({ pad: "x".repeat(1_100_000) })), 413);

    const replies = await eventually(
      "replies in Slack",
      async () =>
        (await (await fetch(`${slack.url}/_control/count`)).json()) as { messages: number },
      (count) => count.messages >= TEXTS.length,
    );
    assert.equal(replies.messages, TEXTS.length);

    assert.equal((await fetch(`${instance.url}/metrics`)).status, 401);
    const expected: Record<string, number> = {
      'edgeclaw_events_accepted_total{channel="slack"}': 3,
      'edgeclaw_events_duplicate_total{channel="slack"}': 1,
      'edgeclaw_events_refused_total{channel="slack",reason="bad_signature"}': 1,
      'edgeclaw_events_refused_total{channel="slack",reason="too_large"}': 1,
      'edgeclaw_ack_latency_seconds_count{channel="slack"}': 6,
      'edgeclaw_runs_total{agent="main",outcome="finished"}': 3,
      'edgeclaw_outbox_sent_total{channel="slack"}': 3,
      edgeclaw_queue_depth: 0,
    };
    const values = await eventually(
      "metrics",
      () => scrape(SECRETS.OBS_METRICS_TOKEN),
      (v) => Object.entries(expected).every(([key, value]) => v.get(key) === value),
    );
    for (const [key, value] of Object.entries(expected)) assert.equal(values.get(key), value, key);
    // Four model calls: one per event, plus the turn after the session_status tool call.
    assert.equal(values.get('edgeclaw_model_calls_total{outcome="ok",provider="fake"}'), 4);
    assert.equal(values.get('edgeclaw_model_call_duration_seconds_count{provider="fake"}'), 4);
    assert.ok(
      (values.get('edgeclaw_tokens_total{agent="main",model="fake/edgeclaw-demo",type="input"}') ??
        0) > 0,
    );
    const gatewayScrape = await scrape(SECRETS.OBS_GATEWAY_TOKEN);
    assert.equal(gatewayScrape.get('edgeclaw_events_accepted_total{channel="slack"}'), 3);

    const spans = await eventually(
      "spans",
      async () => collector.spans(),
      (list) => list.filter((s) => s.name === "openclaw.run").length >= 3,
    );
    const runs = spans.filter((span) => span.name === "openclaw.run");
    assert.equal(runs.length, 3);
    const attr = (span: (typeof spans)[number], key: string) =>
      span.attributes.find((a) => a.key === key)?.value;
    for (const span of runs) {
      assert.equal(span.service, "edgeclaw");
      assert.deepEqual(attr(span, "openclaw.channel"), { stringValue: "slack" });
      assert.deepEqual(attr(span, "openclaw.outcome"), { stringValue: "finished" });
      assert.equal(span.parentSpanId, undefined);
    }
    const models = spans.filter((span) => span.name === "openclaw.model.call");
    assert.equal(models.length, 4);
    for (const span of models) {
      const parent = runs.find((r) => r.traceId === span.traceId);
      assert.ok(parent, "every model span belongs to a run's trace");
      assert.equal(span.parentSpanId, parent.spanId);
      assert.deepEqual(attr(span, "gen_ai.system"), { stringValue: "fake" });
      assert.deepEqual(attr(span, "openclaw.outcome"), { stringValue: "ok" });
    }
    const tools = spans.filter((span) => span.name === "openclaw.tool.execution");
    assert.equal(tools.length, 1);
    assert.deepEqual(attr(tools[0]!, "openclaw.tool.name"), { stringValue: "session_status" });
    for (const request of collector.requests) {
      assert.equal(request.headers["x-tenant"], SECRETS.OBS_OTEL_TENANT);
      for (const text of TEXTS) assert.ok(!request.raw.includes(text), "no message text in spans");
    }

    const log = instance.output();
    for (const [name, secret] of Object.entries(SECRETS))
      assert.ok(!log.includes(secret), `${name} appears in the log`);
  });

  it("lists admin actions in the audit trail through `npx edgeclaw audit`", async () => {
    const auth = {
      authorization: `Bearer ${SECRETS.OBS_GATEWAY_TOKEN}`,
      "content-type": "application/json",
    };
    const added = await fetch(`${instance.url}/admin/allowlist/slack`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ senderId: "UAUDITCLI" }),
    });
    assert.equal(added.status, 201);
    const cli = spawnSync(
      process.execPath,
      [
        join(projectRoot, "bin", "edgeclaw.mjs"),
        "audit",
        "--url",
        instance.url,
        "--token",
        SECRETS.OBS_GATEWAY_TOKEN,
        "--json",
        "--limit",
        "5",
      ],
      {
        cwd: projectRoot,
        encoding: "utf8",
        timeout: 60_000,
      },
    );
    assert.equal(cli.status, 0, cli.stderr);
    const listed = JSON.parse(cli.stdout) as {
      entries: Array<{ action: string; detail: { senderId?: string } }>;
    };
    assert.equal(listed.entries[0]?.action, "allowlist.added");
    assert.equal(listed.entries[0]?.detail.senderId, "UAUDITCLI");
    const human = spawnSync(
      process.execPath,
      [
        join(projectRoot, "bin", "edgeclaw.mjs"),
        "audit",
        "--url",
        instance.url,
        "--token",
        SECRETS.OBS_GATEWAY_TOKEN,
      ],
      { cwd: projectRoot, encoding: "utf8", timeout: 60_000 },
    );
    assert.equal(human.status, 0, human.stderr);
    assert.match(human.stdout, /ACTION[\s\S]*allowlist\.added/);
  });
});
