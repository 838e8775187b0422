import type * as z from "zod";

/**
 * A config problem as one `<key.path>: <reason>` line per issue. zod says only "Invalid input" when
 * no branch of a union fits (a model selection, a SecretInput); this names what was expected instead:
 * the inner problem of the branch whose type matched, or every type the key takes.
 */
export function describeIssues(
  issues: readonly z.core.$ZodIssue[],
  prefix: PropertyKey[] = [],
): string[] {
  return issues.flatMap((issue) => {
    const path = [...prefix, ...issue.path];
    if (issue.code === "invalid_union" && issue.errors.length > 0) {
      // A branch whose issues are all below the value itself accepted its type: its complaints are the real ones.
      const matched = issue.errors.find(
        (branch) => branch.length > 0 && branch.every((inner) => inner.path.length > 0),
      );
      if (matched) return describeIssues(matched, path);
      const expected = [
        ...new Set(
          issue.errors.flatMap((branch) =>
            branch.filter((inner) => inner.path.length === 0).map(expectation),
          ),
        ),
      ];
      const received = issue.errors
        .flat()
        .map((inner) => /received (\w+)/.exec(inner.message)?.[1])
        .find(Boolean);
      return [
        `${where(path)}: expected ${expected.join(" or ")}${received ? `, received ${received}` : ""}`,
      ];
    }
    return [
      `${where(path)}: ${issue.message.replace(/^Invalid input: /, "").replace(/^expected (\w+), received undefined$/, "missing (expected $1)")}`,
    ];
  });
}

function expectation(issue: z.core.$ZodIssue): string {
  if (issue.code === "invalid_type") return issue.expected;
  if (issue.code === "invalid_value")
    return issue.values.map((value) => JSON.stringify(value)).join(" | ");
  // A custom message already says "expected …" (a path pattern): the caller adds the word once.
  return issue.message.replace(/^Invalid input: /, "").replace(/^expected /, "");
}

function where(path: PropertyKey[]): string {
  return path.length ? path.map(String).join(".") : "(root)";
}
