import { Hono } from "hono";
import type { Env } from "./env.ts";
import { SessionDO } from "../durable-objects/session.ts";
import { AuthLimiterDO } from "../durable-objects/auth-limiter.ts";
import { MetricsShardDO } from "../durable-objects/metrics-shard.ts";
import { BudgetDO } from "../durable-objects/budget.ts";
import { openaiApi } from "./openai.ts";
import { webchat } from "./webchat.ts";
import { admin } from "./admin.ts";
import { channelWebhooks } from "./webhooks.ts";
import { internalIngress } from "./internal-ingress.ts";
import { metrics } from "./metrics.ts";

export { SessionDO, AuthLimiterDO, MetricsShardDO, BudgetDO };

const app = new Hono<{ Bindings: Env }>();

app.get("/health", (c) => c.json({ ok: true, status: "live" }));
app.route("/v1", openaiApi);
app.route("/admin", admin);
app.route("/", metrics);
app.route("/internal", internalIngress);
// Every registered channel's webhook path(s), from config, through the one generic handler.
app.use("*", channelWebhooks());
app.route("/", webchat);

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>;
