import { createHash } from "node:crypto";

/**
 * What a platform that takes media by link does with it (LINE's `originalContentUrl`, Twilio's
 * `MediaUrl`): fetch it, with a HEAD first as Twilio does, and keep what came back. The fakes
 * record this on the message, so a test or a simulation sees whether the link served the bytes
 * with the type it claimed. A link that cannot be reached (the test suite's Worker has no port)
 * is recorded as that error; nothing waits on it.
 */
export interface FetchedMedia {
  url: string;
  status?: number;
  contentType?: string | null;
  contentDisposition?: string | null;
  sizeBytes?: number;
  sha256?: string;
  error?: string;
}

export async function fetchLikePlatform(
  url: string,
  options: { head?: boolean } = {},
): Promise<FetchedMedia> {
  try {
    if (options.head) {
      const head = await fetch(url, { method: "HEAD", signal: AbortSignal.timeout(5000) });
      if (!head.ok) return { url, status: head.status };
    }
    const response = await fetch(url, { redirect: "manual", signal: AbortSignal.timeout(10_000) });
    const bytes = Buffer.from(await response.arrayBuffer());
    return {
      url,
      status: response.status,
      contentType: response.headers.get("content-type"),
      contentDisposition: response.headers.get("content-disposition"),
      sizeBytes: bytes.byteLength,
      sha256: createHash("sha256").update(bytes).digest("hex"),
    };
  } catch (error) {
    return { url, error: error instanceof Error ? error.message : String(error) };
  }
}
