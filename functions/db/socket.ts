/**
 * The WebSocket the Neon driver talks through, opened the Workers way (a fetch with `Upgrade:
 * websocket`) so that every failure arrives somewhere we listen:
 *  - a refused or dropped connect rejects our fetch (workerd's `new WebSocket()` instead leaves an
 *    uncaught "Network connection lost" rejection behind for each failed attempt);
 *  - writes after the socket closed are dropped (the driver queues its writes on a timer, and
 *    `send()` after close throws from that timer, uncaught); the query that wanted them fails on
 *    the close instead;
 *  - the owner hears about every close and error (`onBroken`) and can close the socket itself,
 *    since the driver's end() never does.
 * It implements the part of the WebSocket interface the driver uses.
 */
export class GuardedSocket extends EventTarget {
  static readonly CONNECTING = 0;
  static readonly OPEN = 1;
  static readonly CLOSING = 2;
  static readonly CLOSED = 3;

  binaryType: "arraybuffer" | "blob" = "arraybuffer";
  readyState = GuardedSocket.CONNECTING;
  private socket: WebSocket | null = null;
  /** Settles once the connection is gone for the server too (its close arrived, or it never opened). */
  private readonly gone: Promise<void>;
  private markGone!: () => void;

  constructor(
    url: string,
    private readonly onBroken: (cause: unknown) => void,
  ) {
    super();
    this.gone = new Promise((resolve) => (this.markGone = resolve));
    const httpUrl = url.replace(/^ws(s?):/, "http$1:");
    fetch(httpUrl, { headers: { Upgrade: "websocket" } })
      .then((response) => {
        const socket = response.webSocket;
        if (!socket)
          throw new Error(`the database proxy answered ${response.status} instead of a WebSocket`);
        // Binary frames as ArrayBuffer, as the driver expects (newer compatibility dates default to Blob).
        (socket as { binaryType?: string }).binaryType = "arraybuffer";
        socket.accept();
        if (this.readyState !== GuardedSocket.CONNECTING) {
          // Closed by its owner while connecting (a timeout): nobody wants this connection.
          socket.addEventListener("close", () => this.markGone());
          safeClose(socket);
          return;
        }
        this.socket = socket;
        socket.addEventListener("message", (event) => {
          // A throw from the driver's parser must end this connection, not escape as uncaught.
          try {
            this.dispatchEvent(new MessageEvent("message", { data: event.data }));
          } catch (error) {
            this.close();
            this.onBroken(error);
          }
        });
        socket.addEventListener("close", () => {
          this.markGone();
          this.closed(new Error("the database socket closed"));
        });
        socket.addEventListener("error", (event) => {
          this.markGone();
          this.closed(new Error(`the database socket failed: ${event.message}`));
        });
        this.readyState = GuardedSocket.OPEN;
        this.dispatchEvent(new Event("open"));
      })
      .catch((error: unknown) => {
        this.markGone();
        this.closed(error);
      });
  }

  send(data: string | ArrayBuffer | ArrayBufferView): void {
    if (this.readyState !== GuardedSocket.OPEN || !this.socket) return;
    try {
      this.socket.send(data);
    } catch (error) {
      this.closed(error);
    }
  }

  /**
   * Closes the socket and settles when the server has seen it go (at most `waitMs`): until then
   * the connection still takes one of the server's slots.
   */
  close(waitMs = CLOSE_WAIT_MS): Promise<void> {
    const socket = this.socket;
    this.closed(new Error("closed by its owner"));
    if (socket) safeClose(socket);
    return Promise.race([this.gone, new Promise<void>((resolve) => setTimeout(resolve, waitMs))]);
  }

  private closed(cause: unknown): void {
    if (this.readyState === GuardedSocket.CLOSED) return;
    this.readyState = GuardedSocket.CLOSED;
    this.onBroken(cause);
    this.dispatchEvent(new Event("close"));
  }
}

const CLOSE_WAIT_MS = 1_000;

function safeClose(socket: WebSocket): void {
  try {
    socket.close();
  } catch {
    // already closed
  }
}
