import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Env } from "../../../workers/env.ts";
import {
  messageEvent,
  newScenario,
  postSigned,
  scriptModel,
  slackCalls,
  slackMessages,
  uniqueId,
  waitFor,
} from "./helpers.ts";
import { recorded } from "../../agent/model-helpers.ts";

const fakeSlack = () => String((env as unknown as Env).FAKE_SLACK_URL);

async function serveFile(path: string, content: string, contentType: string): Promise<string> {
  const res = await fetch(`${fakeSlack()}/_control/file`, {
    method: "POST",
    body: JSON.stringify({ path, content, contentType }),
  });
  return ((await res.json()) as { url: string }).url;
}

describe("Slack file_share", () => {
  it("downloads a shared text file with the bot token and gives its contents to the model; a binary file is only described", async () => {
    const scenario = newScenario("slack-file");
    await scriptModel(scenario, [{ type: "text", text: "I read your notes." }]);
    const notesUrl = await serveFile(
      `/files/${uniqueId("F")}/notes.md`,
      "# Notes\nbuy milk",
      "text/markdown",
    );
    const zipUrl = await serveFile(
      `/files/${uniqueId("F")}/photos.zip`,
      "PK\u0003\u0004zip",
      "application/zip",
    );
    const channel = uniqueId("D");
    const body = messageEvent({
      eventId: uniqueId("Ev"),
      channel,
      channelType: "im",
      text: `read this [scenario:${scenario}]`,
      ts: `${Math.floor(Date.now() / 1000)}.000100`,
      extra: {
        subtype: "file_share",
        files: [
          {
            id: "F1",
            name: "notes.md",
            mimetype: "text/markdown",
            size: 16,
            url_private: notesUrl,
          },
          {
            id: "F2",
            name: "photos.zip",
            mimetype: "application/zip",
            size: 7,
            url_private: zipUrl,
          },
        ],
      },
    });
    expect((await postSigned(body)).status).toBe(200);
    await waitFor(async () => ((await slackMessages(channel)).length ? true : undefined));

    const [request] = await recorded(scenario);
    const seen = JSON.stringify(request!.body);
    expect(seen).toContain("buy milk");
    expect(seen).toContain("photos.zip");
    expect(seen).toContain("not a text file");
    expect(seen).not.toContain("PK\\u0003");
    const downloads = (await slackCalls("files.download")).filter((call) =>
      String(call.args.path).includes("notes.md"),
    );
    expect(downloads).toHaveLength(1);
    expect(downloads[0]!.token).not.toBe("");
  });

  it("never sends the bot token to a host that is not Slack's", async () => {
    const scenario = newScenario("slack-file-host");
    await scriptModel(scenario, [{ type: "text", text: "ok" }]);
    const channel = uniqueId("D");
    const body = messageEvent({
      eventId: uniqueId("Ev"),
      channel,
      channelType: "im",
      text: `look [scenario:${scenario}]`,
      ts: `${Math.floor(Date.now() / 1000)}.000200`,
      extra: {
        subtype: "file_share",
        files: [
          {
            id: "F3",
            name: "x.txt",
            mimetype: "text/plain",
            size: 3,
            url_private: "https://files.example.net/x.txt",
          },
        ],
      },
    });
    expect((await postSigned(body)).status).toBe(200);
    await waitFor(async () => ((await slackMessages(channel)).length ? true : undefined));
    const [request] = await recorded(scenario);
    expect(JSON.stringify(request!.body)).toContain(
      "refusing to send the bot token to files.example.net",
    );
  });
});
