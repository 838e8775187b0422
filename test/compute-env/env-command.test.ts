import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { RoutedEvent } from "../../durable-objects/session-api.ts";
import { configFromEnv } from "../../functions/channels/gateway-config.ts";
import { envCommandReply } from "../../functions/compute-env/chat-command.ts";
import { beginInstall, updateInstall } from "../../functions/compute-env/installs.ts";
import { registerEnv } from "../../functions/compute-env/manifest.ts";
import { collectRunEvents, sessionStub, webchatEvent } from "../durable-objects/helpers.ts";

/**
 * `/env` in the chat: the envs as the manifest last listed them, one env's packages, the open
 * "create a new env?" questions — read from Postgres, nothing run in the sandbox. Against an agent
 * of its own (registered rows, so the answers are exact), and through the SessionDO's fast path for
 * an agent without a computing environment and for the test config's "scientist".
 */
const AGENT = `envchat${crypto.randomUUID().slice(0, 6)}`;
const raw = JSON.parse((env as { EDGECLAW_CONFIG: string }).EDGECLAW_CONFIG);
raw.agents.list.push({
  id: AGENT,
  sandbox: { backend: "companion", mode: "all", scope: "agent" },
  computeEnv: { enabled: true, primary: "echat", channels: ["file:///opt/conda/channel"] },
});
const config = configFromEnv({ EDGECLAW_CONFIG: JSON.stringify(raw) });
const db = env as never;

function reply(args: string): Promise<string> {
  return envCommandReply(config, db, AGENT, args);
}

function doneText(events: Awaited<ReturnType<typeof collectRunEvents>>): string {
  const done = events.find((event) => event.type === "done");
  return done?.type === "done" ? done.text : "";
}

describe("/env", () => {
  it("status, packages and questions of an agent's computing environment", async () => {
    expect(await reply("")).toContain("No conda env is registered yet");
    await registerEnv(db, AGENT, {
      name: "echat",
      type: "primary",
      description: "Base scientific environment + Biology",
      packages: { python: "3.12.8", numpy: "1.26.4", biopython: "1.84" },
    });
    await registerEnv(db, AGENT, {
      name: "echat-gpu",
      type: "auxiliary",
      description: "GPU computing (PyTorch, CUDA)",
      createdReason: "PyTorch CUDA conflicts with numpy 1.x in primary env",
      packages: { python: "3.12.8", pytorch: "2.5.1" },
    });
    const id = `${AGENT}:q1`;
    await beginInstall(db, { id, agentId: AGENT, kind: "install", packages: ["jax", "jaxlib"] });
    await updateInstall(db, id, {
      status: "needs-new-env",
      proposal: { name: "echat-jax", packages: ["jax", "jaxlib"], reason: "conflicts" },
    });

    const status = await reply("status");
    expect(status).toContain("Computing environments (as last listed):");
    expect(status).toContain(
      "echat (primary, Python 3.12.8): Base scientific environment + Biology — 3 packages",
    );
    expect(status).toContain(
      "echat-gpu (auxiliary, Python 3.12.8): GPU computing (PyTorch, CUDA) — created because PyTorch CUDA conflicts with numpy 1.x in primary env — 2 packages",
    );
    expect(status).toContain("R is not in echat: ask me to install r-base r-irkernel r-essentials");
    expect(status).toContain("1 question about a new env waits for an answer: /env questions");
    expect(await reply("")).toBe(status);

    expect(await reply("packages")).toBe(
      "echat (primary, 3 packages): biopython 1.84, numpy 1.26.4, python 3.12.8",
    );
    expect(await reply("packages echat-gpu")).toBe(
      "echat-gpu (auxiliary, 2 packages): python 3.12.8, pytorch 2.5.1",
    );
    expect(await reply("packages nope")).toBe('No registered env "nope": echat, echat-gpu.');

    const questions = await reply("questions");
    expect(questions).toContain("Waiting for an answer (1):");
    expect(questions).toContain(
      `• jax jaxlib conflicts with every env — create echat-jax for it? (question ${id})`,
    );
    await updateInstall(db, id, { status: "declined" });
    expect(await reply("questions")).toBe("No question waits for an answer.");
    expect(await reply("status")).toContain("No question waits for an answer.");

    for (const bad of ["install seaborn", "status extra", "packages a b"])
      expect(await reply(bad)).toBe("Usage: /env [status | packages [<env>] | questions]");
  });

  it("answers on the fast path: no computing environment for main, the manifest for scientist", async () => {
    const mainKey = `agent:main:webchat:env-${crypto.randomUUID().slice(0, 8)}`;
    expect(
      doneText(
        await collectRunEvents(await sessionStub(mainKey).chat(webchatEvent(mainKey, "/env"))),
      ),
    ).toBe(
      "This agent has no computing environment (agents.defaults.computeEnv.enabled, with a sandbox backend).",
    );
    const key = `agent:scientist:webchat:env-${crypto.randomUUID().slice(0, 8)}`;
    const event: RoutedEvent = {
      ...webchatEvent(key, "/env packages no-such-env"),
      agentId: "scientist",
    };
    expect(doneText(await collectRunEvents(await sessionStub(key).chat(event)))).toMatch(
      /^No (registered env "no-such-env": acaclaw|conda env is registered yet)/,
    );
  });
});
