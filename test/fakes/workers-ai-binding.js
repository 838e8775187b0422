// The test Worker's `AI` binding: a separate Worker whose entrypoint answers `run(model, inputs)` as
// Workers AI's binding does (the result object on success, a thrown Error otherwise). It forwards
// each call over loopback to the fake model server's Workers AI route, which computes the vectors
// and logs the call, so a test sees real RPC and real HTTP, never a stubbed function.
// Plain JavaScript: miniflare loads auxiliary Workers without bundling.
import { WorkerEntrypoint } from "cloudflare:workers";

export class FakeWorkersAi extends WorkerEntrypoint {
  async run(model, inputs, options) {
    const response = await fetch(`${this.env.FAKE_MODEL_URL}/ai/run/${encodeURIComponent(model)}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(inputs),
    });
    // `returnRawResponse: true`: the model's HTTP answer itself (audio bytes for a speech model).
    if (options?.returnRawResponse) return response;
    const body = await response.json();
    if (!response.ok || !body.success) {
      const first =
        Array.isArray(body.errors) && body.errors[0]
          ? body.errors[0]
          : { code: response.status, message: "error" };
      throw new Error(`${first.code}: ${first.message}`);
    }
    return body.result;
  }

  // Markdown Conversion: `toMarkdown(files | file, options)` → one ConversionResult per file (or
  // one for one). The files are read here and posted to the fake server, which converts them.
  async toMarkdown(files, options) {
    const list = Array.isArray(files) ? files : [files];
    const payload = [];
    for (const file of list) {
      const bytes = new Uint8Array(await file.blob.arrayBuffer());
      let binary = "";
      for (let i = 0; i < bytes.length; i += 0x8000)
        binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
      payload.push({ name: file.name, mimeType: file.blob.type, data: btoa(binary) });
    }
    const response = await fetch(`${this.env.FAKE_MODEL_URL}/ai/tomarkdown`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ files: payload, options: options ?? {} }),
    });
    if (!response.ok) throw new Error(`toMarkdown: HTTP ${response.status}`);
    const results = await response.json();
    return Array.isArray(files) ? results : results[0];
  }
}

export default {
  fetch() {
    return new Response("the fake Workers AI binding answers RPC only", { status: 404 });
  },
};
