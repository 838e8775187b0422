import { runInDurableObject } from "cloudflare:test";
import { sessionStub } from "../helpers.ts";
import type { SubagentChild } from "../../../durable-objects/session/subagents/shapes.ts";
import type { RoutedEvent } from "../../../durable-objects/session-api.ts";
import { EVENTS } from "../../../durable-objects/session/inbox/settled-by-run.ts";

/** What a session keeps about its children (meta subagentChildren). */
export async function childrenOf(key: string): Promise<SubagentChild[]> {
  return runInDurableObject(sessionStub(key), async (_instance, state) => {
    const row = state.storage.sql
      .exec<{ value: string }>(`SELECT value FROM meta WHERE key = 'subagentChildren'`)
      .toArray()[0];
    return row ? (JSON.parse(row.value) as SubagentChild[]) : [];
  });
}

export interface InboxLine {
  dedupKey: string;
  state: string;
  event: RoutedEvent;
}

/** The inbox rows of a session whose dedup key starts with `prefix`, as the session reads them. */
export async function inboxRows(key: string, prefix: string): Promise<InboxLine[]> {
  return runInDurableObject(sessionStub(key), async (_instance, state) =>
    state.storage.sql
      .exec<{ dedup_key: string; state: string; event: string }>(
        `SELECT dedup_key, state, event FROM ${EVENTS} WHERE dedup_key LIKE ? ORDER BY seq`,
        `${prefix}%`,
      )
      .toArray()
      .map((row) => ({
        dedupKey: row.dedup_key,
        state: row.state,
        event: JSON.parse(row.event) as RoutedEvent,
      })),
  );
}

/** The parent's spawn + yield batch: the task carries the child's scenario, `note` the parent's. */
export function spawnAndYield(
  childScenario: string,
  parentScenario: string,
  task = "Find the answer",
  extra: Record<string, unknown> = {},
) {
  return {
    type: "tool_calls",
    calls: [
      {
        id: `call_spawn_${crypto.randomUUID().slice(0, 8)}`,
        name: "sessions_spawn",
        arguments: {
          task: `${task} [scenario:${childScenario}]`,
          label: "lookup",
          ...extra,
          note: `[scenario:${parentScenario}]`,
        },
      },
      {
        id: `call_yield_${crypto.randomUUID().slice(0, 8)}`,
        name: "sessions_yield",
        arguments: {},
      },
    ],
  };
}
