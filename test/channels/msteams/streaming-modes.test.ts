import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { contextFor } from "../../../functions/channels/channel-account.ts";
import type { MsTeamsAccount } from "../../../functions/channels/msteams/config.ts";
import { msTeamsChannel } from "../../../functions/channels/msteams/index.ts";
import { parseConfig } from "../../../functions/channels/gateway-config.ts";
import type { ProgressContext, ProgressState } from "../../../functions/channels/adapter.ts";
import type { ReplyRoute } from "../../../functions/core/envelope.ts";
import { msTeamsProgress } from "../../../functions/channels/msteams/progress.ts";
import { sendTeamsMessage } from "../../../functions/channels/msteams/send.ts";
import { fakeTeams, settle, teamsActivities, TEST_MSTEAMS, uniqueId } from "./helpers.ts";

/**
 * The non-default `streaming.mode`s, driven through the adapter's own progress and send against the
 * fake Bot Connector: "progress" shows Teams' informative line (with tool steps) and ends it with
 * the answer as the final message; "off" and "block" stream nothing and post the answer whole.
 */

function contextWith(mode: string): ProgressContext<MsTeamsAccount> {
  const config = parseConfig({
    channels: {
      msteams: {
        enabled: true,
        appId: TEST_MSTEAMS.appId,
        tenantId: TEST_MSTEAMS.tenantId,
        openIdMetadataUrl: `${fakeTeams()}/botframework/v1/.well-known/openidconfiguration`,
        loginBaseUrl: `${fakeTeams()}/login`,
        serviceUrlAllowlist: [fakeTeams()],
        streaming: { mode },
      },
    },
  });
  const base = { config, env: env as unknown as Record<string, unknown> };
  return { ...contextFor(msTeamsChannel, base, "default"), runId: uniqueId("run") };
}

function personalRoute(): ReplyRoute {
  return {
    channel: "msteams",
    accountId: "default",
    to: `a:${uniqueId("dm")}`,
    extra: { serviceUrl: fakeTeams(), conversationType: "personal" },
  };
}

describe("Microsoft Teams streaming modes", () => {
  it('"progress": an informative line with the tool step, then the answer as the stream\'s final message', async () => {
    const ctx = contextWith("progress");
    const route = personalRoute();
    let state: ProgressState = await msTeamsProgress(route, { type: "run-started" }, {}, ctx);
    expect(state.streamId).toBeTruthy();
    await settle(1100); // one stream update a second
    state = await msTeamsProgress(
      route,
      { type: "tool", name: "web_fetch", phase: "start" },
      state,
      ctx,
    );
    state = await msTeamsProgress(
      route,
      { type: "text-delta", text: "Done", soFar: "Done" },
      state,
      ctx,
    );
    const sent = await sendTeamsMessage(
      {
        id: uniqueId("c"),
        route,
        text: "Done: **42**",
        chunkIndex: 0,
        chunkCount: 1,
        progressState: state,
      },
      ctx,
    );
    expect(sent.ok).toBe(true);
    const shown = await teamsActivities(route.to);
    expect(shown.map((a) => [a.type, a.streamType, a.text])).toEqual([
      ["typing", "informative", "Working…"],
      ["typing", "informative", "Working… (web_fetch)"],
      ["message", "final", "Done: **42**"],
    ]);
    expect(new Set(shown.map((a) => a.streamId))).toEqual(new Set([state.streamId]));
  });

  it.each(["off", "block"])(
    '"%s": no stream and no preview, the answer posted whole after the typing activity',
    async (mode) => {
      const ctx = contextWith(mode);
      const route = personalRoute();
      let state: ProgressState = await msTeamsProgress(route, { type: "run-started" }, {}, ctx);
      state = await msTeamsProgress(
        route,
        { type: "text-delta", text: "Hel", soFar: "Hel" },
        state,
        ctx,
      );
      expect(state).toEqual({});
      expect(
        (
          await sendTeamsMessage(
            {
              id: uniqueId("c"),
              route,
              text: "Hello",
              chunkIndex: 0,
              chunkCount: 1,
              progressState: state,
            },
            ctx,
          )
        ).ok,
      ).toBe(true);
      expect((await teamsActivities(route.to)).map((a) => [a.type, a.streamType, a.text])).toEqual([
        ["typing", undefined, undefined],
        ["message", undefined, "Hello"],
      ]);
    },
  );
});
