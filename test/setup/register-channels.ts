import { channelDefinition, registerChannel } from "../../functions/channels/registry.ts";
import { relayChannel } from "../channels/relay/index.ts";

// The test-only channel joins the built-in ones before any config is parsed (vitest setupFiles).
// Test files share one module graph (isolate: false), so a later file finds it registered already.
if (!channelDefinition(relayChannel.id)) registerChannel(relayChannel);
