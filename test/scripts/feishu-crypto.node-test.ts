import assert from "node:assert/strict";
import { createCipheriv, createHash, randomBytes } from "node:crypto";
import { describe, it } from "node:test";
import * as lark from "@larksuiteoapi/node-sdk";
import {
  decryptFeishu,
  encryptFeishu,
  signFeishuRequest,
} from "../../functions/channels/feishu/crypto.ts";
import { verifyFeishuRequest } from "../../functions/channels/feishu/verify.ts";

/**
 * `@larksuiteoapi/node-sdk` (Feishu's own Node SDK) as the oracle for the Worker's hand-written
 * WebCrypto code, on generated inputs: its `AESCipher` decrypts what `encryptFeishu` produces; what
 * Node's own AES-256-CBC produces with Feishu's key derivation `decryptFeishu` reads; its
 * `EventDispatcher` accepts exactly the requests `verifyFeishuRequest` accepts (signed with
 * `signFeishuRequest`, or tampered), and `generateChallenge` reads our encrypted challenge.
 * (The Worker does not bundle the SDK: it pulls in axios, ws and protobufjs.)
 */

const alphabet = [
  "a",
  "Z",
  "0",
  " ",
  '"',
  "\\",
  "\n",
  "é",
  "飞书",
  "☕",
  "🚀",
  "{",
  "}",
  "%",
  "+",
  "/",
  "=",
];
function seeded(seed: number) {
  let state = seed;
  return () => (state = (state * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
}

function generator(seed: number) {
  const random = seeded(seed);
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
  const word = (min: number, spread: number) =>
    Array.from({ length: min + Math.floor(random() * spread) }, () => pick(alphabet)).join("");
  return { random, pick, word };
}

/** A schema 2.0 message event with generated text, ids and key. */
function generatedEvent(g: ReturnType<typeof generator>, i: number) {
  const text = g.word(0, 40);
  return {
    schema: "2.0",
    header: {
      event_id: `ev-${i}-${g.word(1, 4)}`,
      event_type: "im.message.receive_v1",
      create_time: String(1_700_000_000_000 + i),
      token: `vt-${i}`,
      app_id: "cli_oracle",
      tenant_key: "tk",
    },
    event: {
      sender: { sender_id: { open_id: `ou_${i}` }, sender_type: "user" },
      message: {
        message_id: `om_${i}`,
        chat_id: `oc_${i % 7}`,
        chat_type: i % 2 ? "group" : "p2p",
        message_type: "text",
        content: JSON.stringify({ text }),
      },
    },
  };
}

/** Node's own AES-256-CBC with Feishu's key derivation (SHA-256 of the Encrypt Key), IV prepended. */
function nodeEncrypt(encryptKey: string, plaintext: string): string {
  const key = createHash("sha256").update(encryptKey).digest();
  const iv = randomBytes(16);
  const cipher = createCipheriv("aes-256-cbc", key, iv);
  return Buffer.concat([iv, cipher.update(plaintext, "utf8"), cipher.final()]).toString("base64");
}

/** What the SDK's adapters hand `EventDispatcher.invoke`: the parsed body over a prototype holding the headers. */
function dispatcherInput(
  body: Record<string, unknown>,
  headers: Record<string, string>,
): Record<string, unknown> {
  return Object.assign(Object.create({ headers }) as Record<string, unknown>, body);
}

describe("Feishu crypto against @larksuiteoapi/node-sdk", () => {
  it("AESCipher decrypts 200 generated encryptFeishu outputs, and decryptFeishu reads Node's AES-256-CBC", async () => {
    const g = generator(20261201);
    for (let i = 0; i < 200; i++) {
      const key = g.word(1, 30);
      const plaintext = i % 3 === 0 ? g.word(0, 60) : JSON.stringify(generatedEvent(g, i));
      const ours = await encryptFeishu(key, plaintext);
      assert.equal(
        new lark.AESCipher(key).decrypt(ours),
        plaintext,
        `encrypt #${i} key ${JSON.stringify(key)}`,
      );
      assert.equal(
        await decryptFeishu(key, nodeEncrypt(key, plaintext)),
        plaintext,
        `decrypt #${i}`,
      );
    }
  });

  it("EventDispatcher accepts what verifyFeishuRequest accepts, and refuses the same tampered requests", async () => {
    const g = generator(4242);
    const now = Date.now();
    for (let i = 0; i < 120; i++) {
      const encryptKey = `ek-${g.word(1, 16)}`;
      const verificationToken = `vt-${i}`;
      const event = generatedEvent(g, i);
      const body = { encrypt: await encryptFeishu(encryptKey, JSON.stringify(event)) };
      // The SDK signs JSON.stringify(body); Feishu's raw bytes are that same serialisation.
      const raw = JSON.stringify(body);
      const timestamp = String(Math.floor(now / 1000) - Math.floor(g.random() * 100));
      // Header values are ASCII: the nonce is drawn from letters and digits.
      const nonce = Math.floor(g.random() * 2 ** 40).toString(36);
      const signature = await signFeishuRequest(timestamp, nonce, encryptKey, raw);
      const tamper = i % 4;
      // 0: genuine; 1: one hex digit of the signature flipped; 2: signed under another key; 3: nonce changed after signing.
      const sentSignature =
        tamper === 1
          ? `${signature.slice(0, 10)}${signature[10] === "0" ? "1" : "0"}${signature.slice(11)}`
          : tamper === 2
            ? await signFeishuRequest(timestamp, nonce, `${encryptKey}x`, raw)
            : signature;
      const sentNonce = tamper === 3 ? `${nonce}!` : nonce;
      const headers = {
        "x-lark-request-timestamp": timestamp,
        "x-lark-request-nonce": sentNonce,
        "x-lark-signature": sentSignature,
      };

      const dispatcher = new lark.EventDispatcher({
        encryptKey,
        verificationToken,
        loggerLevel: lark.LoggerLevel.fatal,
      }).register({
        "im.message.receive_v1": async (data: Record<string, unknown>) => ({
          handled: data.event_id,
          text: (data.message as { content: string }).content,
        }),
      });
      const sdk = (await dispatcher.invoke(dispatcherInput(body, headers))) as
        | { handled?: string; text?: string }
        | undefined;
      const ourResult = await verifyFeishuRequest(
        { raw: new TextEncoder().encode(raw), headers: new Headers(headers), receivedAt: now },
        { encryptKey, verificationToken },
        300,
      );

      assert.equal(
        ourResult.ok,
        tamper === 0,
        `ours, request ${i} tamper ${tamper}: ${JSON.stringify(ourResult)}`,
      );
      assert.equal(sdk !== undefined, tamper === 0, `sdk, request ${i} tamper ${tamper}`);
      if (tamper === 0 && ourResult.ok) {
        assert.equal(sdk!.handled, event.header.event_id);
        assert.equal(sdk!.text, event.event.message.content);
        assert.deepEqual(ourResult.body, event);
      }
    }
  });

  it("generateChallenge reads the encrypted url_verification encryptFeishu produces", async () => {
    const g = generator(7);
    for (let i = 0; i < 30; i++) {
      const encryptKey = g.word(1, 20);
      const challenge = `ch-${g.word(1, 20)}`;
      const body = {
        encrypt: await encryptFeishu(
          encryptKey,
          JSON.stringify({ challenge, token: "vt", type: "url_verification" }),
        ),
      };
      const answer = lark.generateChallenge(body, { encryptKey });
      assert.equal(answer.isChallenge, true);
      assert.deepEqual(answer.challenge, { challenge });
    }
  });

  it("both refuse the published sample under another key", async () => {
    const sample = "P37w+VZImNgPEO1RBhJ6RtKl7n6zymIbEG1pReEzghk=";
    assert.equal(new lark.AESCipher("test key").decrypt(sample), "hello world");
    assert.equal(await decryptFeishu("test key", sample), "hello world");
    assert.throws(() => new lark.AESCipher("other key").decrypt(sample));
    assert.equal(await decryptFeishu("other key", sample), undefined);
  });
});
