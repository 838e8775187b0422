import { describe, expect, it } from "vitest";
import type { ProgressState, SendResult } from "../../functions/channels/adapter.ts";
import {
  commitPreview,
  retractPreview,
  streamPreview,
  type PostOutcome,
  type PreviewLimits,
  type PreviewPlatform,
  type TrackedKeys,
} from "../../functions/channels/preview-stream.ts";

/**
 * The branches of the shared preview state machine that no channel test pins: the throttle's exact
 * boundary, block mode, the overflow rule, a lost post or edit followed by more text and then the
 * final commit, the recover step's three answers. The platform is a small in-memory chat (the
 * boundary the channels pass in); the machine itself runs unmocked, with explicit clock values.
 */

const KEYS: TrackedKeys = {
  id: "previewId",
  pending: "previewPendingAt",
  editedAt: "previewEditedAt",
  broken: "previewBroken",
};
const LIMITS: PreviewLimits = { editIntervalMs: 1000, maxChars: 20, overflow: "cut", block: false };

/** A chat that keeps its messages; `next*` scripts the outcome of the following call. */
function chat() {
  const messages = new Map<string, string>();
  const calls: string[] = [];
  const checkpoints: ProgressState[] = [];
  let seq = 0;
  const script = {
    post: "ok" as "ok" | "lost" | "refused" | "lost-but-landed",
    edit: "ok" as "ok" | "fail",
    recover: undefined as string | undefined | "unknown",
  };
  const platform: PreviewPlatform<string> = {
    render: (shown) => shown || undefined,
    post: async (text): Promise<PostOutcome> => {
      calls.push(`post ${text}`);
      if (script.post === "refused") return { ok: false, landed: "no" };
      const id = `m${++seq}`;
      if (script.post === "lost-but-landed") messages.set(id, text);
      if (script.post !== "ok") return { ok: false, landed: "maybe" };
      messages.set(id, text);
      return { ok: true, id };
    },
    edit: async (id, text) => {
      calls.push(`edit ${id} ${text}`);
      if (script.edit === "fail" || !messages.has(id)) return false;
      messages.set(id, text);
      return true;
    },
  };
  const ctx = { checkpoint: (state: ProgressState) => void checkpoints.push({ ...state }) };
  return { messages, calls, checkpoints, script, platform, ctx };
}

describe("preview-stream", () => {
  it("posts on the first words, then edits no sooner than editIntervalMs after the last post or edit (the boundary edits)", async () => {
    const c = chat();
    let state = await streamPreview({}, "Hel", c.platform, LIMITS, KEYS, c.ctx, 10_000);
    expect(c.calls).toEqual(["post Hel"]);
    expect(c.checkpoints).toEqual([{ previewPendingAt: "10000" }]);
    expect(state).toMatchObject({ previewId: "m1", previewEditedAt: "10000" });
    expect(state.previewPendingAt).toBeUndefined();
    state = await streamPreview(state, "Hello", c.platform, LIMITS, KEYS, c.ctx, 10_999);
    expect(c.calls).toHaveLength(1);
    state = await streamPreview(state, "Hello wo", c.platform, LIMITS, KEYS, c.ctx, 11_000);
    expect(c.calls).toEqual(["post Hel", "edit m1 Hello wo"]);
    expect(state.previewEditedAt).toBe("11000");
    state = await streamPreview(state, "Hello world", c.platform, LIMITS, KEYS, c.ctx, 11_500);
    expect(c.calls).toHaveLength(2);
    expect(c.messages.get("m1")).toBe("Hello wo");
  });

  it("cuts the shown text at maxChars (overflow cut) or stops updating past it (overflow stop)", async () => {
    const long = "x".repeat(25);
    const cut = chat();
    await streamPreview({}, long, cut.platform, LIMITS, KEYS, cut.ctx, 0);
    expect(cut.calls).toEqual([`post ${"x".repeat(20)}`]);
    const stop = chat();
    const state = await streamPreview(
      {},
      long,
      stop.platform,
      { ...LIMITS, overflow: "stop" },
      KEYS,
      stop.ctx,
      0,
    );
    expect(stop.calls).toEqual([]);
    expect(state).toEqual({});
  });

  it("block mode posts at once, then edits only when the text ends a paragraph", async () => {
    const c = chat();
    const block = { ...LIMITS, block: true, maxChars: 100 };
    let state = await streamPreview({}, "One", c.platform, block, KEYS, c.ctx, 0);
    state = await streamPreview(state, "One two", c.platform, block, KEYS, c.ctx, 5000);
    expect(c.calls).toEqual(["post One"]);
    state = await streamPreview(state, "One two.\n\n", c.platform, block, KEYS, c.ctx, 6000);
    expect(c.calls).toEqual(["post One", "edit m1 One two.\n\n"]);
  });

  it("a lost post is never followed by a second post: the mark stays, previewing stops, and the final is posted once", async () => {
    const c = chat();
    c.script.post = "lost-but-landed";
    let state = await streamPreview({}, "Hi", c.platform, LIMITS, KEYS, c.ctx, 0);
    expect(state).toEqual({ previewPendingAt: "0", previewBroken: "1" });
    c.script.post = "ok";
    state = await streamPreview(state, "Hi there", c.platform, LIMITS, KEYS, c.ctx, 5000);
    expect(c.calls).toEqual(["post Hi"]);
    const posted: string[] = [];
    const result = await commitPreview({
      previewId: state.previewId,
      edit: async () => ({ ok: true }),
      post: async () => {
        posted.push("Hi there, done");
        return { ok: true, platformMessageId: "final" };
      },
    });
    expect(result).toEqual({ ok: true, platformMessageId: "final" });
    expect(posted).toEqual(["Hi there, done"]);
  });

  it("a crash between the pending mark and the post's answer: the resumed run posts nothing where it cannot search", async () => {
    const c = chat();
    const state = await streamPreview(
      { previewPendingAt: "0" },
      "Hi again",
      c.platform,
      LIMITS,
      KEYS,
      c.ctx,
      5000,
    );
    expect(c.calls).toEqual([]);
    expect(state).toEqual({ previewPendingAt: "0", previewBroken: "1" });
  });

  it("a refused post drops its mark (nothing landed) and stops previewing", async () => {
    const c = chat();
    c.script.post = "refused";
    const state = await streamPreview({}, "Hi", c.platform, LIMITS, KEYS, c.ctx, 0);
    expect(state).toEqual({ previewBroken: "1" });
    expect(c.checkpoints).toEqual([{ previewPendingAt: "0" }]);
  });

  it("a lost edit stops further edits, and the final still commits into the preview (not a second message)", async () => {
    const c = chat();
    let state = await streamPreview({}, "Draft", c.platform, LIMITS, KEYS, c.ctx, 0);
    c.script.edit = "fail";
    state = await streamPreview(state, "Draft two", c.platform, LIMITS, KEYS, c.ctx, 2000);
    expect(state.previewBroken).toBe("1");
    c.script.edit = "ok";
    state = await streamPreview(state, "Draft three", c.platform, LIMITS, KEYS, c.ctx, 4000);
    expect(c.calls).toEqual(["post Draft", "edit m1 Draft two"]);
    const result = await commitPreview({
      previewId: state.previewId,
      edit: async (id) => ((await c.platform.edit(id, "Final answer")) ? { ok: true } : "gone"),
      post: async () => ({ ok: false, retryable: false, error: "must not post" }),
    });
    expect(result).toEqual({ ok: true, platformMessageId: "m1" });
    expect([...c.messages.values()]).toEqual(["Final answer"]);
  });

  it("recover: a found preview is edited, none found allows a fresh post, a failed search stops previewing", async () => {
    const found = chat();
    found.messages.set("old", "Hi");
    const withFound = { ...found.platform, recover: async () => "old" };
    const adopted = await streamPreview(
      { previewPendingAt: "0" },
      "Hi there",
      withFound,
      LIMITS,
      KEYS,
      found.ctx,
      3000,
    );
    expect(found.calls).toEqual(["edit old Hi there"]);
    expect(adopted).toEqual({ previewId: "old", previewEditedAt: "3000" });

    const none = chat();
    const fresh = await streamPreview(
      { previewPendingAt: "0" },
      "Hi",
      { ...none.platform, recover: async () => undefined },
      LIMITS,
      KEYS,
      none.ctx,
      3000,
    );
    expect(none.calls).toEqual(["post Hi"]);
    expect(fresh).toEqual({ previewId: "m1", previewEditedAt: "3000" });

    const unknown = chat();
    const stopped = await streamPreview(
      { previewPendingAt: "0" },
      "Hi",
      { ...unknown.platform, recover: async () => "unknown" as const },
      LIMITS,
      KEYS,
      unknown.ctx,
      3000,
    );
    expect(unknown.calls).toEqual([]);
    expect(stopped).toEqual({ previewPendingAt: "0", previewBroken: "1" });
  });

  it("commit: a preview gone posts the chunk and discards the stale one; a transient failure is returned without posting", async () => {
    const log: string[] = [];
    const post = async (): Promise<SendResult> => {
      log.push("post");
      return { ok: true, platformMessageId: "new" };
    };
    const gone = await commitPreview({
      previewId: "p",
      edit: async () => "gone",
      post,
      discard: async (id) => log.push(`discard ${id}`),
    });
    expect(gone).toEqual({ ok: true, platformMessageId: "new" });
    expect(log).toEqual(["post", "discard p"]);
    log.length = 0;
    const busy = await commitPreview({
      previewId: "p",
      edit: async () => ({ ok: false, retryable: true, error: "429" }),
      post,
    });
    expect(busy).toEqual({ ok: false, retryable: true, error: "429" });
    expect(log).toEqual([]);
  });

  it("retract removes every preview message and returns the first failure for the outbox to retry", async () => {
    const removed: string[] = [];
    const ok = await retractPreview(["a", undefined, "b"], async (id) => {
      removed.push(id);
      return { ok: true };
    });
    expect(ok).toEqual({ ok: true });
    expect(removed).toEqual(["a", "b"]);
    const failed = await retractPreview(["a", "b"], async (id) =>
      id === "a" ? { ok: false, retryable: true, error: "503" } : { ok: true },
    );
    expect(failed).toEqual({ ok: false, retryable: true, error: "503" });
  });
});
