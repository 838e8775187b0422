// Preloaded (`node --import`) into the wrangler process `npm run dev` starts in a process group of
// its own. dev holds the other end of a pipe on the fd named below; the kernel closes it however dev
// ends (Ctrl-C, SIGKILL, OOM kill), and then this takes wrangler's whole group (workerd, esbuild)
// down with it. Without it, a killed dev leaves wrangler and workerd serving with Postgres gone.
// Plain JavaScript: it runs in wrangler's own node, without tsx.
import { Socket } from "node:net";

const fd = Number.parseInt(process.env.EDGECLAW_PARENT_PIPE_FD ?? "", 10);
// Not inherited by anything wrangler starts.
delete process.env.EDGECLAW_PARENT_PIPE_FD;

if (Number.isInteger(fd)) {
  const pipe = new Socket({ fd, readable: true, writable: false });
  const die = () => {
    try {
      process.kill(-process.pid, "SIGKILL");
    } catch {
      process.kill(process.pid, "SIGKILL");
    }
  };
  pipe.on("data", () => {});
  pipe.once("end", die);
  pipe.once("error", die);
  // Watching must not keep wrangler alive on its own.
  pipe.unref();
}
