import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { writeFile } from "../../../functions/agent/workspace.ts";
import { recorded } from "../../agent/model-helpers.ts";
import {
  messageUpdate,
  newScenario,
  postUpdate,
  privateChat,
  scriptModel,
  TEST_TELEGRAM,
  telegramMessages,
  waitFor,
  settle,
} from "./helpers.ts";

/**
 * A reply that names a workspace file on a `MEDIA:` line (OpenClaw's reply-with-file line): the
 * text goes as a message without that line, and the file follows as a Telegram document with the
 * file's bytes. A file that is not in the workspace is said in one line, never dropped in silence.
 */

async function ask(user: string, scenario: string) {
  const res = await postUpdate(
    messageUpdate({
      from: { id: user },
      chat: privateChat(user),
      text: `send me the report [scenario:${scenario}]`,
    }),
  );
  expect(res.headers.get("x-edgeclaw-ingest")).toBe("accepted");
}

describe("Telegram: files in a reply", { timeout: 60_000 }, () => {
  it("a MEDIA: line sends the workspace file as a document after the text", async () => {
    const scenario = newScenario("tg-file-out");
    const path = `reports/${scenario}.md`;
    await writeFile(env, "main", path, "# Q3\n\nRevenue up 12 %.\n");
    await scriptModel(scenario, [{ type: "text", text: `Here is the report.\nMEDIA: ${path}\n` }]);
    const user = TEST_TELEGRAM.allowed[11]!;
    await ask(user, scenario);
    const messages = await waitFor(async () => {
      const all = (await telegramMessages(user)).filter((m) => !m.deleted);
      return all.some((m) => m.file) ? all : undefined;
    });
    await settle(100);
    const visible = (await telegramMessages(user)).filter((m) => !m.deleted);
    expect(visible.map((m) => m.text)).toEqual(["Here is the report.", ""]);
    const doc = messages.find((m) => m.file)!;
    expect(doc.file).toMatchObject({
      method: "sendDocument",
      name: `${scenario}.md`,
      type: "text/markdown",
      size: 23,
    });
  });

  it("a MEDIA: line naming no workspace file is told in one line", async () => {
    const scenario = newScenario("tg-file-missing");
    await scriptModel(scenario, [{ type: "text", text: "Attached.\nMEDIA: nowhere/none.pdf" }]);
    const user = TEST_TELEGRAM.allowed[11]!;
    await ask(user, scenario);
    const reply = await waitFor(async () =>
      (await telegramMessages(user)).find((m) => !m.deleted && m.text.includes("none.pdf")),
    );
    expect(reply.text).toBe(
      "Attached.\n\n📎 none.pdf was not sent: no such file in the workspace.",
    );
    expect((await telegramMessages(user)).some((m) => m.file?.name === "none.pdf")).toBe(false);
  });
});

describe("Telegram: a voice reply (tts)", { timeout: 60_000 }, () => {
  it("a reply tagged [[tts]] goes as text, then as a voice note (sendVoice, Ogg/Opus from /audio/speech)", async () => {
    const scenario = newScenario("tg-tts");
    await scriptModel(scenario, [{ type: "text", text: "Hello from the voice note [[tts]]" }]);
    const user = TEST_TELEGRAM.allowed[11]!;
    await ask(user, scenario);
    const voice = await waitFor(async () =>
      (await telegramMessages(user)).find((m) => m.file?.method === "sendVoice"),
    );
    expect(voice.file).toMatchObject({ name: "reply.ogg", type: "audio/ogg" });
    const speech = await recorded("tts:tts-test");
    expect(speech.at(-1)!.body).toMatchObject({
      model: "tts-test",
      input: "Hello from the voice note",
      voice: "alloy",
      response_format: "opus",
    });
    const texts = (await telegramMessages(user)).filter((m) => !m.deleted && !m.file);
    expect(texts.at(-1)!.text).toBe("Hello from the voice note");
  });
});
