import { registerChannel } from "../../functions/channels/registry.ts";
import { relayChannel } from "../channels/relay/index.ts";

// The test-only channel joins the built-in ones before any config is parsed (vitest setupFiles).
registerChannel(relayChannel);
