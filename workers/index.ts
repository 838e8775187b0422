import { Hono } from "hono";
import type { Env } from "./env.ts";
import { SessionDO } from "../durable-objects/session.ts";
import { AuthLimiterDO } from "../durable-objects/auth-limiter.ts";
import { AuthProfileStateDO } from "../durable-objects/auth-profiles.ts";
import { MetricsShardDO } from "../durable-objects/metrics-shard.ts";
import { BudgetDO } from "../durable-objects/budget.ts";
import { SchedulerDO } from "../durable-objects/scheduler.ts";
import { schedulerStub } from "../durable-objects/scheduler-stub.ts";
import { hooks } from "./hooks.ts";
import { MemoryIndexDO } from "../durable-objects/memory-index.ts";
import { CompanionDO } from "../durable-objects/companion.ts";
import { CompanionContainerDO } from "../durable-objects/companion-container.ts";
import { SandboxDO } from "../durable-objects/sandbox.ts";
import { keepCompanionContainers } from "./companion-container-keeper.ts";
import { ChannelStateDO } from "../durable-objects/channel-state.ts";
import { companionApi } from "./companion-api.ts";
import { openaiApi } from "./openai.ts";
import { webchat } from "./webchat.ts";
import { control } from "./control.ts";
import { admin } from "./admin.ts";
import { channelWebhooks } from "./webhooks.ts";
import { internalIngress } from "./internal-ingress.ts";
import { metrics } from "./metrics.ts";
import { media } from "./media.ts";

export { SessionDO, AuthLimiterDO, MetricsShardDO, BudgetDO, SchedulerDO };
export { MemoryIndexDO };
export { CompanionDO };
export { CompanionContainerDO };
export { SandboxDO };
// The sandbox container's egress allowlist (docker.allowedHosts) is enforced by this entrypoint of
// @cloudflare/containers, which the Container class reaches through ctx.exports.
export { ContainerProxy } from "@cloudflare/containers";
export { ChannelStateDO };
export { AuthProfileStateDO };

const app = new Hono<{ Bindings: Env }>();

// Liveness only, for anyone: the companion's detail (connector errors, account ids, env var names)
// is behind the gateway token at /admin/companion/status.
app.get("/health", (c) => c.json({ ok: true, status: "live" }));
// Signed links to staged files, before anything that asks for the gateway token (workers/media.ts).
app.route("/", media);
app.route("/v1", openaiApi);
app.route("/admin", admin);
app.route("/", control);
app.route("/", metrics);
app.route("/internal", internalIngress);
app.route("/internal/companion", companionApi);
app.route("/", hooks);
// Every registered channel's webhook path(s), from config, through the one generic handler.
app.use("*", channelWebhooks());
app.route("/", webchat);

/**
 * Heartbeats are planned from the deployed config, which changes only with a deploy: the first
 * request an isolate serves asks the scheduler to re-plan if the config changed (off the response
 * path). No timer, no poll: with nothing scheduled the scheduler holds no alarm.
 */
let schedulerConfigChecked = false;
/** Likewise the companion container (a no-op unless the deploy added it): started soon after a deploy, not only at the next cron. */
let companionContainersChecked = false;

export default {
  fetch(request: Request, env: Env, ctx: ExecutionContext) {
    if (!schedulerConfigChecked) {
      schedulerConfigChecked = true;
      ctx.waitUntil(
        schedulerStub(env)
          .ensureConfig()
          .catch((error: unknown) => {
            schedulerConfigChecked = false;
            console.warn(
              "scheduler config check failed",
              error instanceof Error ? error.message : error,
            );
          }),
      );
    }
    if (!companionContainersChecked) {
      companionContainersChecked = true;
      ctx.waitUntil(keepCompanionContainers(env));
    }
    return app.fetch(request, env, ctx);
  },
  /** The cron the deploy adds with the companion container: re-arms every deployment's keeper (keepCompanionContainers). */
  scheduled(_controller: ScheduledController, env: Env, ctx: ExecutionContext) {
    ctx.waitUntil(keepCompanionContainers(env));
  },
} satisfies ExportedHandler<Env>;
