import { channelPieces } from "./channel-pieces.ts";
import type { ChannelTestKit } from "./channel-test-kit.ts";

export type { ChannelTestKit, CompanionTestKey, FakeValues } from "./channel-test-kit.ts";

function isTestKit(value: unknown): value is ChannelTestKit {
  const kit = value as ChannelTestKit | undefined;
  return (
    typeof kit?.start === "function" &&
    typeof kit.config === "function" &&
    typeof kit.bindings === "function"
  );
}

/** Every channel's test kit, in the registry's order. */
export function channelTestKits(): Promise<Array<{ channel: string; piece: ChannelTestKit }>> {
  return channelPieces(
    "test-kit.ts",
    "testKit",
    isTestKit,
    (id) => import(`../../functions/channels/${id}/test-kit.ts`),
  );
}

/** The name the global setup provides a channel's started-fake values under. */
export function testKitKey(channel: string): `channelKit:${string}` {
  return `channelKit:${channel}`;
}
