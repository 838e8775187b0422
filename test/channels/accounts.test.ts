import { afterEach, describe, expect, it, vi } from "vitest";
import * as z from "zod";
import {
  accountIds,
  defaultAccountEnv,
  enabledAccounts,
  logClash,
  mergedAccount,
  webhookAccounts,
  webhookRoutes,
  type MergedAccount,
} from "../../functions/channels/accounts.ts";
import {
  channelAccessSchema,
  channelAccountAccessSchema,
} from "../../functions/config/channel-access.ts";

/** A channel as small as the helpers allow: a path, a token, a nested object and a mode. */
const accountFields = {
  webhookPath: z.string().optional(),
  token: z.union([z.string(), z.object({ source: z.literal("env"), id: z.string() })]).optional(),
  streaming: z.object({ mode: z.string().optional(), chunkMode: z.string().optional() }).optional(),
  mode: z.enum(["http", "socket"]).optional(),
};
const schema = channelAccessSchema.safeExtend({
  ...accountFields,
  webhookPath: z.string().default("/demo"),
  streaming: z
    .object({ mode: z.string().default("partial"), chunkMode: z.string().default("length") })
    .prefault({}),
  accounts: z.record(z.string(), channelAccountAccessSchema.extend(accountFields)).optional(),
});
type Demo = z.infer<typeof schema>;

const accountOf = (demo: Demo) => (accountId: string) =>
  mergedAccount(demo, accountId, { replace: ["groups"] });
const served = (demo: Demo, onClash?: (accountId: string, path: string) => void) =>
  webhookAccounts(
    demo,
    accountOf(demo),
    (account: MergedAccount<Demo>) => (account.mode === "socket" ? undefined : account.webhookPath),
    onClash,
  );

afterEach(() => vi.restoreAllMocks());

describe("channel accounts", () => {
  it("lists each `accounts.<id>`, or the root alone as the default account (`defaultAccount` names it)", () => {
    expect(accountIds(schema.parse({}))).toEqual(["default"]);
    expect(accountIds(schema.parse({ defaultAccount: "main" }))).toEqual(["main"]);
    expect(accountIds(schema.parse({ accounts: { a: {}, b: {} } }))).toEqual(["a", "b"]);
  });

  it("merges an account over the root: its own keys win, unset keys inherit, objects merge one level deep, `replace` keys and `replaceWhen` values go whole", () => {
    const demo = schema.parse({
      dmPolicy: "allowlist",
      token: { source: "env", id: "ROOT_TOKEN" },
      streaming: { mode: "off" },
      groups: { g1: { requireMention: false }, g2: {} },
      accounts: {
        ops: {
          dmPolicy: "pairing",
          token: { source: "env", id: "OPS_TOKEN" },
          streaming: { chunkMode: "newline" },
          groups: { g3: {} },
        },
      },
    });
    const ops = mergedAccount(demo, "ops", { replace: ["groups"] });
    expect(ops).toMatchObject({
      accountId: "ops",
      isDefault: false,
      dmPolicy: "pairing",
      webhookPath: "/demo",
      streaming: { mode: "off", chunkMode: "newline" },
    });
    expect(Object.keys(ops.groups ?? {})).toEqual(["g3"]);
    // A SecretRef merged key by key would keep the root's id under the account's source: replaced whole instead.
    expect(mergedAccount(demo, "ops", { replaceWhen: (value) => "source" in value }).token).toEqual(
      { source: "env", id: "OPS_TOKEN" },
    );
    expect(mergedAccount(demo, "ops", { mergeObjects: false }).streaming).toEqual({
      chunkMode: "newline",
    });
    // An id with no block of its own is the root's settings.
    expect(mergedAccount(demo, "default")).toMatchObject({
      accountId: "default",
      isDefault: true,
      dmPolicy: "allowlist",
      streaming: { mode: "off", chunkMode: "length" },
    });
  });

  it("serves enabled accounts by path, refuses a second account on a taken path (and says so), and skips what the Worker does not serve", () => {
    const demo = schema.parse({
      accounts: {
        a: {},
        b: { webhookPath: "/demo/b" },
        clash: { webhookPath: "/demo/b" },
        off: { enabled: false, webhookPath: "/demo/off" },
        sock: { mode: "socket", webhookPath: "/demo/sock" },
      },
    });
    const clashes: string[] = [];
    const byPath = served(demo, (accountId, path) => clashes.push(`${accountId} ${path}`));
    expect([...byPath].map(([path, account]) => `${path} ${account.accountId}`)).toEqual([
      "/demo a",
      "/demo/b b",
    ]);
    expect(clashes).toEqual(["clash /demo/b"]);

    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    served(demo, logClash("demo", "webhookPath"));
    expect(logged).toHaveBeenCalledWith(
      "channels.demo: account clash reuses webhookPath /demo/b; not served",
    );
  });

  it("serves nothing while the channel is off, even enabled accounts; lists the enabled accounts a mode picks", () => {
    expect(served(schema.parse({ enabled: false, accounts: { a: { enabled: true } } })).size).toBe(
      0,
    );
    expect(served(schema.parse({ enabled: false })).size).toBe(0);
    const demo = schema.parse({
      mode: "socket",
      accounts: { a: {}, off: { enabled: false }, web: { mode: "http" } },
    });
    const sockets = (root: Demo) =>
      enabledAccounts(root, accountOf(root), (account) => account.mode === "socket").map(
        (account) => account.accountId,
      );
    expect(sockets(demo)).toEqual(["a"]);
    expect(sockets({ ...demo, enabled: false })).toEqual([]);
  });

  it("labels routes with the account only when there are several", () => {
    const one = webhookRoutes("Demo", served(schema.parse({})));
    expect(one).toEqual([
      {
        path: "/demo",
        accountId: "default",
        label: "Demo",
        account: expect.objectContaining({ accountId: "default" }),
      },
    ]);
    const two = webhookRoutes(
      "Demo",
      served(
        schema.parse({
          accounts: {
            a: {},
            b: { webhookPath: "/demo/b" },
            off: { enabled: false, webhookPath: "/x" },
          },
        }),
      ),
    );
    expect(two.map((route) => `${route.path} ${route.label}`)).toEqual([
      "/demo Demo (account a)",
      "/demo/b Demo (account b)",
    ]);
  });

  it("lets env variables stand in for the default account only, first non-empty name first", () => {
    const demo = schema.parse({ defaultAccount: "main", accounts: { main: {}, other: {} } });
    const env = { DEMO_TOKEN: "", DEMO_TOKEN_OLD: "from-env", NOT_A_STRING: 7 };
    expect(
      defaultAccountEnv(mergedAccount(demo, "main"), env)("DEMO_TOKEN", "DEMO_TOKEN_OLD"),
    ).toBe("from-env");
    expect(defaultAccountEnv(mergedAccount(demo, "main"), env)("NOT_A_STRING")).toBeUndefined();
    expect(defaultAccountEnv(mergedAccount(demo, "other"), env)("DEMO_TOKEN_OLD")).toBeUndefined();
    // `default` is an ordinary account once `defaultAccount` names another one.
    expect(
      defaultAccountEnv(mergedAccount(demo, "default"), env)("DEMO_TOKEN_OLD"),
    ).toBeUndefined();
  });
});
