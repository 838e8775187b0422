import type { IncomingMessage } from "node:http";

/** The whole request body as UTF-8 text (fakes only; they take small, trusted bodies). */
export async function readBody(req: IncomingMessage): Promise<string> {
  return (await readRawBody(req)).toString("utf8");
}

/** The whole request body as bytes (a multipart upload carries binary parts UTF-8 would mangle). */
export function readRawBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}
