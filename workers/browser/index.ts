import { WorkerEntrypoint } from "cloudflare:workers";
import type {
  BrowserCall,
  BrowserReply,
  BrowserServiceRpc,
} from "../../functions/agent/browser-wire.ts";
import type { BrowserDoEnv, BrowserSessionDO } from "./session-do.ts";

/**
 * The browser Worker: a Worker of its own (wrangler.browser.toml) because @cloudflare/playwright
 * alone is about 600 KiB gzipped, more than the main Worker's whole budget leaves. The main Worker's
 * `browser` tool reaches `BrowserService.call` over the `BROWSER_WORKER` service binding; each call
 * goes to the session's BrowserSessionDO. It answers nothing over HTTP but a health line: it has no
 * public surface.
 */

export { BrowserSessionDO } from "./session-do.ts";

interface Env extends BrowserDoEnv {
  BROWSER_SESSIONS: DurableObjectNamespace<BrowserSessionDO>;
}

export class BrowserService extends WorkerEntrypoint<Env> implements BrowserServiceRpc {
  async call(call: BrowserCall): Promise<BrowserReply> {
    const stub = this.env.BROWSER_SESSIONS.getByName(`${call.agentId}\n${call.sessionKey}`);
    return (await stub.call(call)) as BrowserReply;
  }
}

export default {
  fetch(): Response {
    return new Response(
      "edgeclaw browser worker: reached through the BROWSER_WORKER service binding only\n",
      {
        status: 404,
      },
    );
  },
} satisfies ExportedHandler<Env>;
