import type { Server } from "node:http";
import type { AddressInfo } from "node:net";

/** Starts a fake on a free loopback port; `stop` drops open connections so tests never hang. */
export async function listenOnLoopback(
  server: Server,
): Promise<{ url: string; stop(): Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
