/**
 * Child session keys (OpenClaw's tools/subagents "Depth levels"): the main session's children are
 * `agent:<id>:subagent:<uuid>`, a child's children add `:subagent:<uuid>` to their parent's key.
 * The uuid is derived from the parent run and the tool call that spawned it, so a parent run
 * resumed after an eviction asks for the same child again instead of starting a second one.
 */

const MARK = ":subagent:";

/** A UUID (version 8: custom, RFC 9562) from SHA-256 of the spawning run and tool call. */
export async function childUuid(parentRunId: string, toolCallId: string): Promise<string> {
  const digest = new Uint8Array(
    await crypto.subtle.digest(
      "SHA-256",
      new TextEncoder().encode(`sessions_spawn\u0000${parentRunId}\u0000${toolCallId}`),
    ),
  );
  const bytes = digest.slice(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x80;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = [...bytes].map((byte) => byte.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The key of a child of `parentKey` (a session of agent `agentId`). */
export function childSessionKey(parentKey: string, agentId: string, uuid: string): string {
  return spawnDepth(parentKey) === 0
    ? `agent:${agentId}${MARK}${uuid}`
    : `${parentKey}${MARK}${uuid}`;
}

/** 0 for a session nobody spawned, 1 for a child, 2 for a grandchild, … */
export function spawnDepth(sessionKey: string): number {
  return sessionKey.split(MARK).length - 1;
}
