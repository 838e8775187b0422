import { describe, expect, it } from "vitest";
import {
  decryptFeishu,
  encryptFeishu,
  signFeishuRequest,
} from "../../../functions/channels/feishu/crypto.ts";

/**
 * Feishu's published decryption sample (Open Platform "Encrypt Key" docs, the SDKs' AESCipher
 * tests): key "test key", ciphertext "P37w+VZImNgPEO1RBhJ6RtKl7n6zymIbEG1pReEzghk=" → "hello world".
 * The signature vector was computed independently (`sha256sum` of timestamp + nonce + key + body).
 */

const SAMPLE = "P37w+VZImNgPEO1RBhJ6RtKl7n6zymIbEG1pReEzghk=";

describe("Feishu crypto", () => {
  it("decrypts Feishu's published sample", async () => {
    expect(await decryptFeishu("test key", SAMPLE)).toBe("hello world");
  });

  it("refuses the sample under another key, a truncated blob and non-base64", async () => {
    expect(await decryptFeishu("other key", SAMPLE)).toBeUndefined();
    expect(await decryptFeishu("test key", SAMPLE.slice(0, 20))).toBeUndefined();
    expect(await decryptFeishu("test key", "not base64!")).toBeUndefined();
  });

  it("round-trips what it encrypts, with a fresh IV each time", async () => {
    const a = await encryptFeishu("k", '{"challenge":"c"}');
    const b = await encryptFeishu("k", '{"challenge":"c"}');
    expect(a).not.toBe(b);
    expect(await decryptFeishu("k", a)).toBe('{"challenge":"c"}');
  });

  it("signs as hex SHA-256 of timestamp + nonce + key + raw body (not an HMAC)", async () => {
    const raw = `{"encrypt":"${SAMPLE}"}`;
    expect(await signFeishuRequest("1700000000", "nonce1", "test key", raw)).toBe(
      "21b279029a3bdf7b9f02a4935c76c53f09876d9d0e45add77a99d55d1bc7e79e",
    );
  });
});
