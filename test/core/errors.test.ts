import { describe, expect, it } from "vitest";
import * as z from "zod";
import { classifyError } from "../../functions/core/classify-error.ts";
import { describeError } from "../../functions/core/describe-error.ts";
import {
  EdgeclawError,
  OutcomeUnknownError,
  PermanentError,
  TransientError,
} from "../../functions/core/errors.ts";
import { ModelError } from "../../functions/agent/types.ts";
import { PostgresUnavailableError } from "../../functions/db/gate.ts";
import { SandboxError } from "../../functions/sandbox/backend.ts";
import { WorkspaceError } from "../../functions/agent/workspace.ts";

describe("errors have a class", () => {
  it("is read from the error and its causes, with retryAfterMs", () => {
    expect(classifyError(new PermanentError("no such chat"))).toEqual({
      class: "permanent",
      reason: "no such chat",
    });
    const wrapped = new Error("query failed", {
      cause: new TransientError("slow down", { retryAfterMs: 1500 }),
    });
    expect(classifyError(wrapped)).toEqual({
      class: "transient",
      reason: "query failed ← slow down",
      retryAfterMs: 1500,
    });
    expect(classifyError(new OutcomeUnknownError("timed out after sending")).class).toBe(
      "outcome-unknown",
    );
    expect(new TransientError("x")).toBeInstanceOf(EdgeclawError);
    expect(new TransientError("x").name).toBe("TransientError");
  });

  it("never from the message: a bug that mentions a connection is still a bug", () => {
    // The old message regex took this for a network failure and retried it twelve times.
    expect(
      classifyError(new TypeError("Cannot read properties of undefined (reading 'connection')"))
        .class,
    ).toBe("permanent");
    // And a failure that says nothing about networks is worth a few tries when nothing marks it.
    expect(classifyError(new Error("Network connection lost.")).class).toBe("transient");
    expect(classifyError(new Error("something odd")).class).toBe("transient");
    expect(classifyError(z.string().safeParse(1).error).class).toBe("permanent");
  });

  it("the project's own errors carry theirs", () => {
    expect(new PostgresUnavailableError(Date.now() + 5000).errorClass).toBe("transient");
    expect(new ModelError("rate_limit", "slow", 429, 2000)).toMatchObject({
      errorClass: "transient",
      retryAfterMs: 2000,
    });
    expect(new ModelError("aborted", "stopped").errorClass).toBe("transient");
    expect(new ModelError("budget", "cap").errorClass).toBe("permanent");
    expect(new SandboxError("unreachable", "no answer").errorClass).toBe("outcome-unknown");
    expect(new SandboxError("refused", "bad workdir").errorClass).toBe("permanent");
    expect(new WorkspaceError("version_conflict", "moved on").errorClass).toBe("transient");
    expect(new WorkspaceError("not_found", "gone").errorClass).toBe("permanent");
  });
});

describe("an error on one line", () => {
  it("joins each cause's first line, outermost first, and bounds it", () => {
    const error = new Error("Failed query: insert into transcripts\nparams: secret text", {
      cause: new Error("connection reset\nat socket.ts:1"),
    });
    expect(describeError(error)).toBe("Failed query: insert into transcripts ← connection reset");
    expect(describeError(error, { innermost: true })).toBe("connection reset");
    expect(describeError({ message: "ErrorEvent from a socket" })).toBe("ErrorEvent from a socket");
    expect(describeError("x".repeat(900))).toHaveLength(500);
  });
});
