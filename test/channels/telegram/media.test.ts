import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { imagesOf } from "../../fakes/model-images.ts";
import { RED_PNG_BASE64 } from "../../fixtures/media/images.ts";
import { fakeModelUrl, recorded } from "../../agent/model-helpers.ts";
import {
  messageUpdate,
  newScenario,
  postUpdate,
  privateChat,
  scriptModel,
  settle,
  telegramCalls,
  TEST_TELEGRAM,
  uniqueUserId,
  telegramMessages,
  waitFor,
} from "./helpers.ts";

/**
 * A Telegram photo reaches the model as an image part: getFile, then the download from the
 * configured apiRoot (the bot token never leaves it), into the media store, loaded for the call.
 * A photo whose bytes are not an image is refused with a note, and the message is still answered.
 */

async function serveFile(fileId: string, contentBase64: string): Promise<void> {
  await fetch(
    `${String((env as unknown as Record<string, unknown>).FAKE_TELEGRAM_URL)}/_control/file`,
    {
      method: "POST",
      body: JSON.stringify({ fileId, contentBase64, filePath: `photos/${fileId}.jpg` }),
    },
  );
}

async function sendPhoto(user: string, scenario: string, fileId: string, size: number) {
  const res = await postUpdate(
    messageUpdate({
      from: { id: user },
      chat: privateChat(user),
      extra: {
        caption: `what is this? [scenario:${scenario}]`,
        photo: [
          { file_id: fileId, file_unique_id: `u-${fileId}`, width: 4, height: 4, file_size: size },
        ],
      },
    }),
  );
  expect(res.headers.get("x-edgeclaw-ingest")).toBe("accepted");
  await waitFor(async () => ((await recorded(scenario)).length ? true : undefined));
  await settle(50);
  return (await recorded(scenario))[0]!;
}

describe("Telegram photos", { timeout: 60_000 }, () => {
  it("a photo reaches the model as an image block with the file's bytes", async () => {
    const scenario = newScenario("tg-photo");
    await scriptModel(scenario, [{ type: "text", text: "A red square." }]);
    const user = TEST_TELEGRAM.allowed[7]!;
    const fileId = `photo-${String(uniqueUserId())}`;
    await serveFile(fileId, RED_PNG_BASE64);
    const request = await sendPhoto(user, scenario, fileId, 73);
    const turn = { messages: [request.body.messages.at(-1)] };
    expect(imagesOf("anthropic", turn)).toEqual([{ mimeType: "image/png", bytes: 73 }]);
    expect(turn.messages[0].content[0].source.data).toBe(RED_PNG_BASE64);
    expect((await telegramCalls("getFile")).some((c) => c.args.file_id === fileId)).toBe(true);
  });

  it("a photo whose bytes are no image is refused with a note; the message is answered", async () => {
    const scenario = newScenario("tg-photo-bad");
    await scriptModel(scenario, [{ type: "text", text: "That did not come through." }]);
    const user = TEST_TELEGRAM.allowed[7]!;
    const fileId = `photo-${String(uniqueUserId())}`;
    await serveFile(fileId, btoa("GIF-not-really, just text"));
    const request = await sendPhoto(user, scenario, fileId, 25);
    const turn = { messages: [request.body.messages.at(-1)] };
    expect(imagesOf("anthropic", turn)).toEqual([]);
    expect(JSON.stringify(turn)).toContain("unrecognised or corrupt bytes");
  });
});

async function fixture(name: string): Promise<string> {
  const res = await fetch(`${fakeModelUrl()}/_control/fixture/${name}`);
  return ((await res.json()) as { base64: string }).base64;
}

async function sendVoice(user: string, scenario: string, fileId: string, size: number) {
  const res = await postUpdate(
    messageUpdate({
      from: { id: user },
      chat: privateChat(user),
      extra: {
        caption: `[scenario:${scenario}]`,
        voice: {
          file_id: fileId,
          file_unique_id: `u-${fileId}`,
          duration: 2,
          mime_type: "audio/ogg",
          file_size: size,
        },
      },
    }),
  );
  expect(res.headers.get("x-edgeclaw-ingest")).toBe("accepted");
  await waitFor(async () => ((await recorded(scenario)).length ? true : undefined));
  await settle(50);
  return (await recorded(scenario))[0]!;
}

describe("Telegram voice notes", { timeout: 60_000 }, () => {
  it("a voice note (OGG/Opus made with espeak-ng) is transcribed and fenced as the sender's words", async () => {
    const scenario = newScenario("tg-voice");
    await scriptModel(scenario, [{ type: "text", text: "Hello to you too." }]);
    const user = TEST_TELEGRAM.allowed[7]!;
    const fileId = `voice-${String(uniqueUserId())}`;
    const ogg = await fixture("voice.ogg");
    await serveFile(fileId, ogg);
    const request = await sendVoice(user, scenario, fileId, atob(ogg).length);
    const turn = JSON.stringify(request.body.messages.at(-1));
    expect(turn).toContain("hello from the voice note");
    expect(turn).toMatch(/transcript of the voice message .*voice\.ogg.* \(machine-generated\)/);
    expect(turn).not.toContain("OggS");
  });

  it("a voice note that cannot be transcribed is told to the sender in one line; the turn still runs", async () => {
    const scenario = newScenario("tg-voice-bad");
    await scriptModel(scenario, [{ type: "text", text: "Could you type it?" }]);
    const user = TEST_TELEGRAM.allowed[10]!;
    const fileId = `voice-${String(uniqueUserId())}`;
    await serveFile(fileId, btoa("OggS but no codec a decoder could open"));
    const request = await sendVoice(user, scenario, fileId, 38);
    expect(JSON.stringify(request.body.messages.at(-1))).toContain("not transcribed:");
    await waitFor(async () =>
      (await telegramMessages(user)).some((m) => m.text.includes("Could you type it?"))
        ? true
        : undefined,
    );
    const notices = (await telegramMessages(user)).filter((m) =>
      m.text.startsWith("🎤 I couldn't transcribe your voice message:"),
    );
    expect(notices).toHaveLength(1);
  });
});
