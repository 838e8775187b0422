import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { recorded } from "../../agent/model-helpers.ts";
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

/**
 * url_private downloads (functions/channels/slack/files.ts): redirects are followed by hand and only
 * between Slack hosts, the bot token never leaves them, and bodies are streamed under a byte cap.
 * Runs on the "probe" account, whose mediaMaxMb is 1.
 */

const testEnv = env as unknown as { FAKE_SLACK_URL: string; FAKE_WEB_URL: string };
const PROBE_PATH = "/slack/probe/events";
const MB = 1024 * 1024;
const nowTs = () =>
  `${Math.floor(Date.now() / 1000)}.${String(Math.floor(Math.random() * 1e6)).padStart(6, "0")}`;

async function serveFile(file: {
  path: string;
  content?: string;
  contentType?: string;
  redirectTo?: string;
  bytes?: number;
  contentLength?: number;
}): Promise<string> {
  const res = await fetch(`${testEnv.FAKE_SLACK_URL}/_control/file`, {
    method: "POST",
    body: JSON.stringify(file),
  });
  return ((await res.json()) as { url: string }).url;
}

/** Shares one text file in a DM on the probe account and returns what the model was sent. */
async function shareAndRead(url: string, name = "notes.txt"): Promise<string> {
  const scenario = newScenario("slack-download");
  await scriptModel(scenario, [{ type: "text", text: "read it" }]);
  const channel = uniqueId("D");
  const body = messageEvent({
    eventId: uniqueId("Ev"),
    channel,
    channelType: "im",
    text: `see attached [scenario:${scenario}]`,
    ts: nowTs(),
    // No `size`: the link's own answer is all the Worker has to go on.
    extra: {
      subtype: "file_share",
      files: [{ id: uniqueId("F"), name, mimetype: "text/plain", url_private: url }],
    },
  });
  expect((await postSigned(body, { path: PROBE_PATH })).status).toBe(200);
  await waitFor(async () => ((await slackMessages(channel)).length ? true : undefined), 20_000);
  const [request] = await recorded(scenario);
  return JSON.stringify(request!.body);
}

async function downloadsOf(path: string) {
  return (await slackCalls("files.download")).filter((call) => call.args.path === path);
}

describe("Slack file downloads", () => {
  it("follows a redirect between Slack hosts, with the token on each hop", async () => {
    const id = uniqueId("F");
    const real = await serveFile({
      path: `/files/${id}/real.txt`,
      content: "the redirected notes",
    });
    const link = await serveFile({ path: `/files/${id}/link.txt`, redirectTo: real });
    const seen = await shareAndRead(link);
    expect(seen).toContain("the redirected notes");
    for (const path of [`/files/${id}/link.txt`, `/files/${id}/real.txt`]) {
      const calls = await downloadsOf(path);
      expect(calls).toHaveLength(1);
      expect(calls[0]!.token).not.toBe("");
    }
  });

  it("refuses a redirect to a host that is not Slack's, which never sees the request or the token", async () => {
    const id = uniqueId("F");
    const elsewhere = `${testEnv.FAKE_WEB_URL}/collect-${id}`;
    const link = await serveFile({ path: `/files/${id}/link.txt`, redirectTo: elsewhere });
    const seen = await shareAndRead(link);
    expect(seen).toContain(`refusing to follow a redirect to ${new URL(elsewhere).host}`);
    const requests = (await (
      await fetch(`${testEnv.FAKE_WEB_URL}/_control/requests`)
    ).json()) as Array<{ path: string; headers: Record<string, unknown> }>;
    expect(requests.filter((request) => request.path.includes(`collect-${id}`))).toEqual([]);
  });

  it("refuses a file whose declared size is over mediaMaxMb without reading it", async () => {
    const path = `/files/${uniqueId("F")}/huge.txt`;
    const url = await serveFile({ path, bytes: 32 * MB, contentLength: 32 * MB });
    const seen = await shareAndRead(url);
    expect(seen).toContain("larger than mediaMaxMb (1 MB)");
    const [call] = await downloadsOf(path);
    // The fake writes as the client reads; socket buffers aside, almost nothing was taken.
    expect(Number(call!.args.sentBytes)).toBeLessThan(16 * MB);
  });

  // A length that understates the body cannot push more in: HTTP framing ends the body where it
  // said. A missing length (chunked) is the case a cap has to catch while streaming.
  it("keeps only the beginning of a large file of unknown length and stops downloading it", async () => {
    const path = `/files/${uniqueId("F")}/long.txt`;
    const url = await serveFile({ path, content: "abcdefgh", bytes: 32 * MB });
    const seen = await shareAndRead(url);
    expect(seen).toContain("abcdefghabcdefgh");
    expect(seen).toContain("[attachment truncated: the rest of the file was not downloaded]");
    const [call] = await downloadsOf(path);
    expect(Number(call!.args.sentBytes)).toBeLessThan(16 * MB);
  });
});
