import { describe, expect, it } from "vitest";
import { recorded } from "../../agent/model-helpers.ts";
import {
  activity,
  approve,
  fakeTeams,
  newScenario,
  postTeams,
  scriptModel,
  settle,
  uniqueId,
  waitFor,
} from "./helpers.ts";

/**
 * Files sent to the bot in a personal chat, downloaded for the model through the fake Microsoft:
 * a SharePoint download link (no token), a Bot Connector attachment (token only after a 401, only to
 * a host on mediaAuthAllowHosts), redirects re-checked hop by hop with the token left behind at a
 * foreign origin, hosts off mediaAllowHosts never fetched, and mediaMaxMb (20 by default) enforced.
 */

interface Download {
  path: string;
  host: string;
  authorization: boolean;
}

async function serveFile(file: {
  path: string;
  content?: string;
  sizeBytes?: number;
  auth?: boolean;
  redirect?: string;
}) {
  await fetch(`${fakeTeams()}/_control/file`, { method: "POST", body: JSON.stringify(file) });
}

async function downloadsOf(path: string): Promise<Download[]> {
  const response = await fetch(
    `${fakeTeams()}/_control/downloads?path=${encodeURIComponent(path)}`,
  );
  return ((await response.json()) as { downloads: Download[] }).downloads;
}

/** Sends one personal-chat message with `attachments` and returns what the model was asked. */
async function modelSees(attachments: unknown[]): Promise<string> {
  const user = uniqueId("aad-f");
  await approve(user);
  const scenario = newScenario("teams-file");
  await scriptModel(scenario, [{ type: "text", text: "read it" }]);
  const response = await postTeams(
    activity({
      kind: "personal",
      conversation: `a:${uniqueId("dm")}`,
      sender: user,
      text: `what is in the file? [scenario:${scenario}]`,
      extra: { attachments },
    }),
  );
  expect(response.status).toBe(200);
  const [request] = await waitFor(async () => {
    const requests = await recorded(scenario);
    return requests.length ? requests : undefined;
  }, 25_000);
  return JSON.stringify(request!.body);
}

const downloadInfo = (name: string, downloadUrl: string) => ({
  contentType: "application/vnd.microsoft.teams.file.download.info",
  name,
  contentUrl: downloadUrl,
  content: { downloadUrl, uniqueId: uniqueId("u"), fileType: name.split(".").pop() },
});

describe("Microsoft Teams inbound files", () => {
  it("a personal-chat file is read from its download link, without the bot's token", async () => {
    const path = `/files/${uniqueId("notes")}.txt`;
    await serveFile({ path, content: "the launch code is tangerine" });
    const prompt = await modelSees([downloadInfo("notes.txt", `${fakeTeams()}${path}`)]);
    expect(prompt).toContain("the launch code is tangerine");
    expect(await downloadsOf(path)).toEqual([expect.objectContaining({ authorization: false })]);
  });

  it("a Bot Connector attachment gets the bot's token only after it answered 401", async () => {
    const path = `/v3/attachments/${uniqueId("att")}/views/original`;
    await serveFile({ path, content: "pasted log line 42", auth: true });
    const prompt = await modelSees([
      { contentType: "text/plain", name: "log.txt", contentUrl: `${fakeTeams()}${path}` },
    ]);
    expect(prompt).toContain("pasted log line 42");
    expect((await downloadsOf(path)).map((d) => d.authorization)).toEqual([false, true]);
  });

  it("a redirect to another origin is followed without the token", async () => {
    const foreign = fakeTeams().replace("127.0.0.1", "localhost");
    const landing = `/files/${uniqueId("landing")}.txt`;
    await serveFile({ path: landing, content: "redirected content" });
    const path = `/v3/attachments/${uniqueId("att")}/views/original`;
    await serveFile({ path, auth: true, redirect: `${foreign}${landing}` });
    const prompt = await modelSees([
      { contentType: "text/plain", name: "r.txt", contentUrl: `${fakeTeams()}${path}` },
    ]);
    expect(prompt).toContain("redirected content");
    expect((await downloadsOf(path)).map((d) => d.authorization)).toEqual([false, true]);
    const atForeign = await downloadsOf(landing);
    expect(atForeign.length).toBeGreaterThan(0);
    expect(atForeign.every((d) => !d.authorization && d.host.startsWith("localhost"))).toBe(true);
  });

  it("never fetches from a host off mediaAllowHosts, directly or by redirect", async () => {
    const path = `/files/${uniqueId("hop")}.txt`;
    await serveFile({ path, redirect: "https://evil.example/steal.txt" });
    const viaRedirect = await modelSees([downloadInfo("hop.txt", `${fakeTeams()}${path}`)]);
    expect(viaRedirect).toContain("evil.example is not on channels.msteams.mediaAllowHosts");
    const direct = await modelSees([downloadInfo("x.txt", "https://evil.example/x.txt")]);
    expect(direct).toContain("evil.example is not on channels.msteams.mediaAllowHosts");
  });

  it("refuses a file over mediaMaxMb (20 MB by default) before reading it", async () => {
    const path = `/files/${uniqueId("big")}.txt`;
    await serveFile({ path, sizeBytes: 21 * 1024 * 1024 });
    const prompt = await modelSees([downloadInfo("big.txt", `${fakeTeams()}${path}`)]);
    expect(prompt).toContain("larger than mediaMaxMb (20 MB)");
    expect(prompt).not.toContain("xxxxxxxxxx");
  });

  it("confused deputy: an attacker-chosen URL on an allowed auth host that answers 401 never gets the token", async () => {
    // Same host as the Bot Connector, on mediaAuthAllowHosts, but not its attachment API.
    const path = `/files/${uniqueId("bait")}/v3/attachments/x`;
    await serveFile({ path, content: "token please", auth: true });
    const prompt = await modelSees([
      { contentType: "text/plain", name: "bait.txt", contentUrl: `${fakeTeams()}${path}` },
    ]);
    expect(prompt).toContain("download answered HTTP 401");
    expect((await downloadsOf(path)).map((d) => d.authorization)).toEqual([false]);
  });

  it("confused deputy: an activity from another Bot Framework channel fetches nothing, with or without the token", async () => {
    const user = uniqueId("aad-dl");
    await approve(user);
    const scenario = newScenario("teams-dl-file");
    await scriptModel(scenario, [{ type: "text", text: "read it" }]);
    const path = `/v3/attachments/${uniqueId("dl")}/views/original`;
    await serveFile({ path, content: "connector bytes", auth: true });
    const body = activity({
      kind: "personal",
      conversation: uniqueId("dl-conv"),
      sender: user,
      text: `open it [scenario:${scenario}]`,
      extra: {
        channelId: "directline",
        attachments: [
          { contentType: "text/plain", name: "c.txt", contentUrl: `${fakeTeams()}${path}` },
        ],
      },
    });
    const response = await postTeams(body);
    expect(response.status).toBe(200);
    await settle(1_500);
    expect(await recorded(scenario)).toEqual([]);
    expect(await downloadsOf(path)).toEqual([]);
  });
});
