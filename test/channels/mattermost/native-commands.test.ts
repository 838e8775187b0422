import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { TEST_MATTERMOST } from "../../../functions/channels/mattermost/test-fixtures.ts";
import {
  FAKE_MATTERMOST_BOT,
  botPostsSettled,
  forgetPairingWhenDone,
  mattermostPosts,
  mmId,
  settle,
  waitFor,
  workerEnv,
} from "./helpers.ts";

/**
 * Native slash commands (`channels.mattermost.commands.native`): the Worker registers `oc_*` on
 * every team through REST (POST /admin/channels/mattermost/commands, what `npx edgeclaw channels
 * mattermost register-commands` calls), keeps the tokens Mattermost issued, and verifies each
 * callback against the token of exactly that team's command. A verified command is a message in the
 * conversation it was typed in, under that conversation's access policy.
 */

const WORKER = "https://edgeclaw.test";
const DEFAULT_PATH = "/api/channels/mattermost/command";
const fake = () => String(workerEnv.FAKE_MATTERMOST_URL);

interface FakeCommand {
  id: string;
  token: string;
  team_id: string;
  trigger: string;
  url: string;
  creator_id: string;
}

async function register(
  accountId: string,
  callbackUrl?: string,
): Promise<{
  status: number;
  body: {
    results?: Array<{ teamId: string; trigger: string; outcome: string }>;
    error?: { message: string };
  };
}> {
  const res = await SELF.fetch(`${WORKER}/admin/channels/mattermost/commands`, {
    method: "POST",
    headers: { authorization: "Bearer test-gateway-token", "content-type": "application/json" },
    body: JSON.stringify({ accountId, ...(callbackUrl ? { callbackUrl } : {}) }),
  });
  return { status: res.status, body: (await res.json()) as never };
}

async function fakeCommands(): Promise<FakeCommand[]> {
  return (await (await fetch(`${fake()}/_control/commands`)).json()) as FakeCommand[];
}

async function tokenOf(teamId: string, trigger: string): Promise<string> {
  const command = (await fakeCommands()).find(
    (c) => c.team_id === teamId && c.trigger === trigger && c.creator_id === FAKE_MATTERMOST_BOT.id,
  );
  if (!command) throw new Error(`no ${trigger} in ${teamId}`);
  return command.token;
}

/** What Mattermost POSTs when a user runs a command (application/x-www-form-urlencoded). */
function commandForm(fields: {
  token: string;
  command: string;
  userId: string;
  channelId: string;
  channelName?: string;
  text?: string;
  teamId?: string;
  triggerId?: string;
}): URLSearchParams {
  return new URLSearchParams({
    channel_id: fields.channelId,
    channel_name: fields.channelName ?? "town-square",
    command: fields.command,
    response_url: `${fake()}/hooks/commands/${mmId("r")}`,
    team_domain: "team-one",
    team_id: fields.teamId ?? "team1",
    text: fields.text ?? "",
    token: fields.token,
    trigger_id: fields.triggerId ?? mmId("t"),
    user_id: fields.userId,
    user_name: "alice",
  });
}

function runCommand(path: string, form: URLSearchParams): Promise<Response> {
  return SELF.fetch(`${WORKER}${path}`, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      authorization: `Token ${form.get("token")}`,
    },
    body: form.toString(),
  });
}

const dmName = (userId: string) => [FAKE_MATTERMOST_BOT.id, userId].sort().join("__");
const botPosts = async (channel: string) =>
  (await mattermostPosts(channel)).filter((p) => p.user_id === FAKE_MATTERMOST_BOT.id);

describe("Mattermost native slash commands", () => {
  it("the callback path answers GET with 405 (served), not 404", async () => {
    const res = await SELF.fetch(`${WORKER}${DEFAULT_PATH}`);
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST");
  });

  it("registers oc_* on every team, leaves another integration's command with the same trigger alone, and updates ours when the callback URL changes", async () => {
    await fetch(`${fake()}/_control/command`, {
      method: "POST",
      body: JSON.stringify({
        team_id: "team2",
        trigger: "oc_help",
        url: "https://other.example/help",
        creator_id: "someoneelse000000000000000",
      }),
    });
    const first = await register("team", "https://gw.example/api/channels/mattermost/command/team");
    expect(first.status).toBe(200);
    const outcome = (team: string, trigger: string) =>
      first.body.results!.find((r) => r.teamId === team && r.trigger === trigger)?.outcome;
    expect(outcome("team2", "oc_help")).toBe("skipped-foreign");
    expect(outcome("team1", "oc_help")).toMatch(/created|updated|unchanged/);
    const triggers = [...new Set(first.body.results!.map((r) => r.trigger))].sort();
    expect(triggers).toEqual([
      "oc_help",
      "oc_model",
      "oc_models",
      "oc_new",
      "oc_queue",
      // OpenClaw's set has /oc_models and /oc_reasoning too; registered now that both exist.
      "oc_reasoning",
      "oc_status",
      "oc_think",
      "oc_verbose",
    ]);

    const before = await fakeCommands();
    const ours = before.filter((c) => c.creator_id === FAKE_MATTERMOST_BOT.id);
    expect(
      ours.every((c) => c.url === "https://gw.example/api/channels/mattermost/command/team"),
    ).toBe(true);
    const foreign = before.find((c) => c.creator_id !== FAKE_MATTERMOST_BOT.id)!;

    const second = await register(
      "team",
      "https://gw2.example/api/channels/mattermost/command/team",
    );
    expect(second.body.results!.filter((r) => r.outcome === "updated").length).toBe(ours.length);
    const after = await fakeCommands();
    for (const command of ours) {
      const now = after.find((c) => c.id === command.id)!;
      expect(now.url).toBe("https://gw2.example/api/channels/mattermost/command/team");
      expect(now.token).toBe(command.token); // updated in place: Mattermost's token stays
    }
    expect(after.find((c) => c.id === foreign.id)).toEqual(foreign);
    expect(after.filter((c) => c.team_id === "team1" && c.trigger === "oc_status")).toHaveLength(1);

    const listed = await SELF.fetch(`${WORKER}/admin/channels/mattermost/commands?account=team`, {
      headers: { authorization: "Bearer test-gateway-token" },
    });
    const text = await listed.text();
    expect(JSON.parse(text).commands.length).toBe(ours.length);
    for (const command of ours) expect(text).not.toContain(command.token);
  });

  it("an allowed user's /oc_status in a DM: ephemeral Processing…, then one normal post with the answer; a replayed callback answers nothing more", async () => {
    await register("team");
    const user = mmId("u");
    const channel = mmId("dm");
    const form = commandForm({
      token: await tokenOf("team1", "oc_status"),
      command: "/oc_status",
      userId: user,
      channelId: channel,
      channelName: dmName(user),
    });
    const res = await runCommand(TEST_MATTERMOST.teamCommandPath, form);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ response_type: "ephemeral", text: "Processing…" });
    const [answer] = await botPostsSettled(channel, 1);
    expect(answer!.message).toMatch(/model/i);

    const replay = await runCommand(TEST_MATTERMOST.teamCommandPath, form);
    expect(replay.status).toBe(200);
    await settle(2000);
    expect(await botPosts(channel)).toHaveLength(1);
  });

  it("refuses a wrong token, the token of another command, another team's token and an unregistered trigger: 401, nothing stored, nothing sent", async () => {
    await register("team");
    const user = mmId("u");
    const channel = mmId("dm");
    const base = { userId: user, channelId: channel, channelName: dmName(user) };
    const attempts = [
      commandForm({ ...base, token: "not-the-token", command: "/oc_status" }),
      commandForm({ ...base, token: await tokenOf("team1", "oc_help"), command: "/oc_status" }),
      commandForm({
        ...base,
        token: await tokenOf("team2", "oc_status"),
        command: "/oc_status",
        teamId: "team1",
      }),
      commandForm({ ...base, token: await tokenOf("team1", "oc_status"), command: "/oc_unknown" }),
      commandForm({ ...base, token: await tokenOf("team1", "oc_status"), command: "/status" }),
      commandForm({ ...base, token: "", command: "/oc_status" }),
    ];
    for (const form of attempts) {
      const res = await runCommand(TEST_MATTERMOST.teamCommandPath, form);
      expect(res.status, form.get("command")!).toBe(401);
      expect(await res.text()).toMatch(/invalid command token|no command token/);
    }
    // A valid token of one account means nothing on another account's path (its registry is its own; "prefix" registered nothing).
    const elsewhere = await runCommand(
      TEST_MATTERMOST.prefixCommandPath,
      commandForm({ ...base, token: await tokenOf("team1", "oc_status"), command: "/oc_status" }),
    );
    expect(elsewhere.status).toBe(401);
    await settle(1500);
    expect(await botPosts(channel)).toEqual([]);
  });

  it("a stranger under the defaults (pairing DMs, allowlisted channels): a DM command earns one pairing code and no answer; a channel command sends nothing", async () => {
    const registered = await register("cmds", `${WORKER}${DEFAULT_PATH}`);
    expect(registered.status).toBe(200);
    const stranger = mmId("s");
    forgetPairingWhenDone(stranger, "cmds");
    const dm = mmId("dm");
    const first = await runCommand(
      DEFAULT_PATH,
      commandForm({
        token: await tokenOf("team1", "oc_status"),
        command: "/oc_status",
        userId: stranger,
        channelId: dm,
        channelName: dmName(stranger),
      }),
    );
    expect(first.status).toBe(200);
    const [code] = await waitFor(async () => {
      const posts = await botPosts(dm);
      return posts.length ? posts : undefined;
    });
    expect(code!.message).toMatch(/pairing/i);
    await runCommand(
      DEFAULT_PATH,
      commandForm({
        token: await tokenOf("team1", "oc_new"),
        command: "/oc_new",
        userId: stranger,
        channelId: dm,
        channelName: dmName(stranger),
      }),
    );

    const channel = mmId("ch");
    const inChannel = await runCommand(
      DEFAULT_PATH,
      commandForm({
        token: await tokenOf("team1", "oc_status"),
        command: "/oc_status",
        userId: stranger,
        channelId: channel,
        channelName: "town-square",
      }),
    );
    expect(inChannel.status).toBe(200);
    await settle(2500);
    expect(await botPosts(dm)).toHaveLength(1);
    expect(await botPosts(channel)).toEqual([]);
  });

  it("a channel is judged by its own policy even when named like a DM of the bot with someone else (open DMs would admit the sender)", async () => {
    await register("team");
    const stranger = mmId("s");
    const channel = TEST_MATTERMOST.commandsChannel;
    for (const channelName of [dmName(TEST_MATTERMOST.member), "commands"]) {
      const res = await runCommand(
        TEST_MATTERMOST.teamCommandPath,
        commandForm({
          token: await tokenOf("team1", "oc_status"),
          command: "/oc_status",
          userId: stranger,
          channelId: channel,
          channelName,
        }),
      );
      expect(res.status).toBe(200);
    }
    await settle(2500);
    expect(await botPosts(channel)).toEqual([]);
    // The member the channel admits gets the answer there.
    await runCommand(
      TEST_MATTERMOST.teamCommandPath,
      commandForm({
        token: await tokenOf("team1", "oc_status"),
        command: "/oc_status",
        userId: TEST_MATTERMOST.member,
        channelId: channel,
        channelName: "commands",
      }),
    );
    expect(await botPostsSettled(channel, 1)).toHaveLength(1);
  });

  it("registration needs commands.native on the account", async () => {
    const res = await register("chatty");
    expect(res.status).toBe(409);
    expect(res.body.error!.message).toMatch(/commands\.native/);
  });
});
