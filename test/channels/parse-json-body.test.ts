import { describe, expect, it } from "vitest";
import * as z from "zod";
import {
  googleChatAccount,
  googleChatChannelSchema,
} from "../../functions/channels/googlechat/config.ts";
import { parseGoogleChatEvent } from "../../functions/channels/googlechat/parse.ts";
import { parseLineBody } from "../../functions/channels/line/parse.ts";
import { msTeamsAccount, msTeamsChannelSchema } from "../../functions/channels/msteams/config.ts";
import { parseTeamsActivity } from "../../functions/channels/msteams/parse.ts";
import {
  parseJsonBody,
  parsePayload,
  readUtf8Body,
} from "../../functions/channels/parse-json-body.ts";
import { classifySlackRequest } from "../../functions/channels/slack/classify.ts";
import {
  telegramAccount,
  telegramChannelSchema,
} from "../../functions/channels/telegram/config.ts";
import { parseTelegramUpdate } from "../../functions/channels/telegram/parse.ts";

const encode = (text: string) => new TextEncoder().encode(text);
/** `{"text":"a<0xff>b"}`: valid JSON around a byte that is not UTF-8. */
const strayByte = Uint8Array.from([...encode('{"text":"a'), 0xff, ...encode('b"}')]);
const schema = z.object({ id: z.number(), name: z.string().optional() });

describe("parseJsonBody (the JSON webhook prologue)", () => {
  it("reads UTF-8 JSON (a leading BOM too) and checks it against the schema", () => {
    expect(parseJsonBody(encode('{"id":7}'), schema, "a thing")).toEqual({
      ok: true,
      value: { id: 7 },
    });
    expect(
      parseJsonBody(Uint8Array.from([0xef, 0xbb, 0xbf, ...encode('{"id":8}')]), schema, "a thing"),
    ).toEqual({ ok: true, value: { id: 8 } });
  });

  it("calls a stray byte, a non-JSON body and a wrong shape malformed, naming the first bad field", () => {
    expect(parseJsonBody(strayByte, schema, "a thing")).toEqual({
      ok: false,
      reason: "body is not UTF-8 JSON",
    });
    expect(parseJsonBody(encode("{nope"), schema, "a thing")).toEqual({
      ok: false,
      reason: "body is not UTF-8 JSON",
    });
    expect(parseJsonBody(encode('{"id":"7"}'), schema, "a thing")).toEqual({
      ok: false,
      reason: expect.stringMatching(/^not a thing \(id: /),
    });
    expect(parsePayload([], schema, "a thing")).toEqual({
      ok: false,
      reason: expect.stringMatching(/^not a thing \(\(body\): /),
    });
    expect(readUtf8Body(Uint8Array.from([0x61, 0xc3]))).toEqual({
      ok: false,
      reason: "body is not UTF-8",
    });
  });

  it("is what every JSON webhook channel answers with: a stray byte is malformed, never replaced by U+FFFD", () => {
    const telegram = telegramAccount(telegramChannelSchema.parse({}), "default");
    const googlechat = googleChatAccount(googleChatChannelSchema.parse({}), "default");
    const msteams = msTeamsAccount(msTeamsChannelSchema.parse({}), "default");
    expect(parseTelegramUpdate(strayByte, { account: telegram, receivedAt: 1 })).toEqual({
      kind: "malformed",
      reason: "body is not UTF-8 JSON",
    });
    expect(parseLineBody(strayByte)).toEqual({
      kind: "malformed",
      reason: "body is not UTF-8 JSON",
    });
    expect(parseGoogleChatEvent(strayByte, googlechat, 1)).toEqual({
      malformed: "body is not UTF-8 JSON",
    });
    expect(parseTeamsActivity(strayByte, msteams, 1)).toEqual({
      malformed: "body is not UTF-8 JSON",
    });
    expect(classifySlackRequest(strayByte, "application/json")).toEqual({
      kind: "malformed",
      reason: "body is not UTF-8",
    });
    // A JSON body of the wrong shape says which field is wrong.
    expect(
      parseTelegramUpdate(encode('{"message":{}}'), { account: telegram, receivedAt: 1 }),
    ).toMatchObject({
      kind: "malformed",
      reason: expect.stringMatching(/^not a Telegram Update \(update_id: /),
    });
  });
});
