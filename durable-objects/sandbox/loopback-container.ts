/**
 * A stand-in for the Containers runtime (`ctx.container`) for the tests, which have no container
 * engine: the same interface, carried over loopback HTTP to a fake engine
 * (test/fakes/container-engine.ts) that runs the sandbox image's host process as a plain node
 * process per container and throws its disk away when it stops, as a container's is. Only used when
 * the runtime gave the object no `ctx.container` AND `EDGECLAW_LOOPBACK_CONTAINERS` names the
 * engine; a deployed Worker never has that variable, so production is untouched.
 *
 * What the @cloudflare/containers library sees is kept to the runtime's contract: `running` is
 * synchronous, `start` returns at once and the port answers "the container is not listening" until
 * the host is up, `monitor()` settles when the container stops (rejecting with the runtime's
 * "container exited with unexpected exit code: N" for a non-zero exit), `signal` and `destroy`
 * stop it.
 */

interface LoopbackState {
  running: boolean;
  starting: Promise<void> | undefined;
  stopped: { promise: Promise<void>; settle(exitCode: number): void } | undefined;
}

/** Per object id, for the life of the isolate (the platform keeps `running` across object restarts too). */
const states = new Map<string, LoopbackState>();

export function withLoopbackContainer<State extends { container?: Container; id: DurableObjectId }>(
  ctx: State,
  env: object,
): State {
  const engine = (env as { EDGECLAW_LOOPBACK_CONTAINERS?: unknown }).EDGECLAW_LOOPBACK_CONTAINERS;
  if (ctx.container || typeof engine !== "string" || !engine) return ctx;
  // The runtime's base class checks the state object's brand, so the stand-in goes on the object
  // itself (an own property over the prototype's absent `container`), not on a wrapper.
  Object.defineProperty(ctx, "container", {
    value: loopbackContainer(engine, ctx.id.toString()),
    configurable: true,
  });
  return ctx;
}

function loopbackContainer(engine: string, id: string): Container {
  let state = states.get(id);
  if (!state) {
    state = { running: false, starting: undefined, stopped: undefined };
    states.set(id, state);
  }
  const s = state;
  const url = (path: string) => `${engine}/containers/${encodeURIComponent(id)}/${path}`;
  const post = (path: string, body: unknown) =>
    fetch(url(path), { method: "POST", body: JSON.stringify(body) });
  const stopped = (exitCode: number) => {
    s.running = false;
    const waiting = s.stopped;
    s.stopped = undefined;
    waiting?.settle(exitCode);
  };
  const fake = {
    get running() {
      return s.running;
    },
    start(options?: ContainerStartupOptions) {
      if (s.running) throw new Error("the container is already running");
      s.running = true;
      let settle: (exitCode: number) => void = () => undefined;
      const promise = new Promise<void>((resolve, reject) => {
        settle = (code) =>
          code === 0
            ? resolve()
            : reject(new Error(`container exited with unexpected exit code: ${code}`));
      });
      promise.catch(() => undefined);
      s.stopped = { promise, settle };
      s.starting = post("start", {
        env: options?.env ?? {},
        enableInternet: options?.enableInternet ?? false,
      }).then(async (response) => {
        if (!response.ok) {
          stopped(1);
          throw new Error(`the loopback engine refused the start: ${await response.text()}`);
        }
      });
      s.starting.catch(() => undefined);
    },
    monitor() {
      return s.stopped?.promise ?? Promise.resolve();
    },
    async destroy() {
      if (!s.running) return;
      const response = await post("signal", { signo: 9 });
      stopped(((await response.json()) as { exitCode: number }).exitCode);
    },
    signal(signo: number) {
      // The runtime delivers the signal and the container exits a moment later.
      void post("signal", { signo })
        .then((response) => response.json() as Promise<{ exitCode: number }>)
        .then(({ exitCode }) => stopped(exitCode))
        .catch(() => undefined);
    },
    getTcpPort(port: number) {
      return {
        async fetch(input: RequestInfo | URL, init?: RequestInit) {
          await s.starting;
          if (!s.running) throw new Error("the container is not listening on that port");
          const request = new Request(input, init);
          const target = new URL(request.url);
          const response = await fetch(
            new Request(url(`port/${port}${target.pathname}${target.search}`), request),
          );
          const stoppedWith = response.headers.get("x-container-stopped");
          if (stoppedWith !== null) stopped(Number(stoppedWith));
          if (response.headers.has("x-container-not-listening"))
            throw new Error("the container is not listening on that port");
          return response;
        },
      };
    },
    async setInactivityTimeout() {},
    /**
     * Not the runtime's: the platform knows at once when a container dies, but the engine cannot
     * tell this stand-in (`running` is synchronous), so a test that crashes one says so here.
     */
    died(exitCode: number) {
      stopped(exitCode);
    },
    async interceptAllOutboundHttp(binding: Fetcher) {
      // What the library installed decides what a command could reach: ask it about a host nobody allowed.
      const probe = await binding.fetch("http://egress-probe.invalid/");
      await post("intercepted", { probeStatus: probe.status });
    },
    async interceptOutboundHttp() {},
    async interceptOutboundHttps() {},
  };
  return fake as unknown as Container;
}
