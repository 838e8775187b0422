import { describe, expect, it } from "vitest";
import {
  lineAccount,
  lineChannelSchema,
  lineSecrets,
  lineWebhookAccounts,
} from "../../../functions/channels/line/config.ts";

describe("channels.line config", () => {
  it("has OpenClaw's defaults", () => {
    const line = lineChannelSchema.parse({});
    expect(line).toMatchObject({
      enabled: true,
      dmPolicy: "pairing",
      groupPolicy: "allowlist",
      requireMention: true,
      webhookPath: "/line/webhook",
      textChunkLimit: 5000,
      mediaMaxMb: 10,
    });
  });

  it('refuses tokenFile/secretFile (a Worker has no file system) and dmPolicy open without "*"', () => {
    const files = lineChannelSchema.safeParse({ tokenFile: "/etc/line-token.txt" });
    expect(files.success).toBe(false);
    expect(JSON.stringify(files.error?.issues)).toContain("no file system");
    expect(lineChannelSchema.safeParse({ accounts: { biz: { secretFile: "/x" } } }).success).toBe(
      false,
    );
    expect(lineChannelSchema.safeParse({ dmPolicy: "open" }).success).toBe(false);
    expect(lineChannelSchema.safeParse({ loadingSeconds: 7 }).success).toBe(false);
    expect(lineChannelSchema.safeParse({ textChunkLimit: 5001 }).success).toBe(false);
  });

  it("env fallbacks serve the default account only; each account has its own path and secrets", () => {
    const line = lineChannelSchema.parse({
      accounts: {
        default: {},
        biz: { webhookPath: "/line/biz", channelSecret: { source: "env", id: "BIZ_SECRET" } },
        same: { webhookPath: "/line/biz" },
      },
    });
    const env = {
      LINE_CHANNEL_SECRET: "default-secret",
      LINE_CHANNEL_ACCESS_TOKEN: "default-token",
      BIZ_SECRET: "biz-secret",
    };
    expect(lineSecrets(lineAccount(line, "default"), env)).toEqual({
      accessToken: "default-token",
      channelSecret: "default-secret",
    });
    expect(lineSecrets(lineAccount(line, "biz"), env)).toEqual({
      accessToken: undefined,
      channelSecret: "biz-secret",
    });
    const clashes: string[] = [];
    const served = lineWebhookAccounts(line, (accountId) => clashes.push(accountId));
    expect([...served.keys()]).toEqual(["/line/webhook", "/line/biz"]);
    expect(clashes).toEqual(["same"]);
  });
});
