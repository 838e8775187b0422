import { describe, expect, it } from "vitest";
import {
  generateTelegramSecretToken,
  TELEGRAM_SECRET_TOKEN_PATTERN,
  verifyTelegramSecret,
} from "../../../functions/channels/telegram/verify.ts";

const headers = (token?: string) =>
  new Headers(token === undefined ? {} : { "X-Telegram-Bot-Api-Secret-Token": token });

describe("verifyTelegramSecret", () => {
  it("accepts the configured secret token", async () => {
    expect(await verifyTelegramSecret(headers("s3cret_Token-1"), "s3cret_Token-1")).toEqual({
      ok: true,
    });
  });

  it("refuses a wrong token, one of another length, and a missing header", async () => {
    expect(await verifyTelegramSecret(headers("s3cret_Token-2"), "s3cret_Token-1")).toEqual({
      ok: false,
      reason: "bad-secret",
    });
    expect(await verifyTelegramSecret(headers("s3cret"), "s3cret_Token-1")).toEqual({
      ok: false,
      reason: "bad-secret",
    });
    expect(await verifyTelegramSecret(headers(), "s3cret_Token-1")).toEqual({
      ok: false,
      reason: "missing-header",
    });
    expect(await verifyTelegramSecret(headers(""), "s3cret_Token-1")).toEqual({
      ok: false,
      reason: "missing-header",
    });
  });

  it("refuses everything when no secret is configured (fail closed)", async () => {
    expect(await verifyTelegramSecret(headers("anything"), undefined)).toEqual({
      ok: false,
      reason: "no-secret",
    });
  });

  it("generates tokens Telegram accepts, different each time", () => {
    const a = generateTelegramSecretToken();
    expect(a).toMatch(TELEGRAM_SECRET_TOKEN_PATTERN);
    expect(a.length).toBe(48);
    expect(generateTelegramSecretToken()).not.toBe(a);
  });
});
