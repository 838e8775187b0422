// The test Worker's `COMPANION_CONTAINER` binding: a stand-in for the Cloudflare Containers
// runtime behind durable-objects/companion-container.ts, which cannot run in workerd without a
// container engine. One object per deployment, answering the same RPC (launch, halt) and keeping a
// log of what it was asked, so a test drives the real keeper (durable-objects/companion-keeper.ts)
// on real storage and alarms and reads what the "runtime" saw. It can be told to fail the next
// starts, as the platform does when no instance is available.
// Plain JavaScript: miniflare loads auxiliary Workers without bundling.
import { DurableObject } from "cloudflare:workers";

export class FakeCompanionContainer extends DurableObject {
  async launch(deployment, vars) {
    const log = (await this.ctx.storage.get("log")) ?? { launches: [], halts: 0, running: false };
    log.launches.push({ at: Date.now(), deployment, vars });
    const failures = (await this.ctx.storage.get("failNext")) ?? 0;
    if (failures > 0) {
      await this.ctx.storage.put("failNext", failures - 1);
      await this.ctx.storage.put("log", log);
      throw new Error("there is no Container instance available at this time");
    }
    log.running = true;
    await this.ctx.storage.put("log", log);
  }

  async halt() {
    const log = (await this.ctx.storage.get("log")) ?? { launches: [], halts: 0, running: false };
    log.halts += 1;
    log.running = false;
    await this.ctx.storage.put("log", log);
  }

  async failNextLaunches(count) {
    await this.ctx.storage.put("failNext", count);
  }

  async record() {
    return (await this.ctx.storage.get("log")) ?? { launches: [], halts: 0, running: false };
  }

  async forget() {
    await this.ctx.storage.deleteAll();
  }
}

export default {
  fetch() {
    return new Response("fake Cloudflare Containers runtime", { status: 404 });
  },
};
