import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { signRequest } from "../../../functions/channels/companion/signature.ts";
import { TEST_WHATSAPP } from "../../../functions/channels/whatsapp/test-fixtures.ts";

/**
 * The WhatsApp connector's link state on its way to the operator: the companion's status report
 * carries `link` (state, the QR code as text and module rows, the pairing code), the Worker keeps
 * it with the live holder's report, and GET /admin/companion/status (gateway token) hands it to the
 * control page and `edgeclaw channels whatsapp link`. A malformed link is refused whole.
 */
async function signed(path: string, body: unknown): Promise<Response> {
  const text = JSON.stringify(body);
  const headers = await signRequest(TEST_WHATSAPP.companionKey, {
    method: "POST",
    path,
    body: new TextEncoder().encode(text),
    timestamp: Math.floor(Date.now() / 1000),
  });
  return SELF.fetch(`https://edgeclaw.test${path}`, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json" },
    body: text,
  });
}

describe("WhatsApp link in the companion status", () => {
  it("keeps the reported QR code for /admin/companion/status and refuses a malformed one", async () => {
    const instanceId = `link-${Date.now()}`;
    const lease = await signed("/internal/companion/lease", { instanceId, action: "acquire" });
    const { epoch } = (await lease.json()) as { epoch: number };
    const link = {
      state: "awaiting-qr",
      qr: "2@ref,noise,identity,adv",
      qrModules: ["1111111", "1000001", "1111111"],
      expiresAt: Date.now() + 20_000,
    };
    const report = (connectorLink: unknown) =>
      signed("/internal/companion/status", {
        epoch,
        instanceId,
        connectors: [
          { channel: "whatsapp", accountId: "team", state: "connecting", link: connectorLink },
        ],
      });
    expect((await report(link)).status).toBe(200);
    const status = await SELF.fetch("https://edgeclaw.test/admin/companion/status", {
      headers: { authorization: "Bearer test-gateway-token" },
    });
    const body = JSON.stringify(await status.json());
    expect(body).toContain('"qrModules":["1111111","1000001","1111111"]');
    expect(body).toContain('"state":"awaiting-qr"');

    expect((await report({ ...link, qrModules: ["12x"] })).status).toBe(400);
    await signed("/internal/companion/lease", { instanceId, action: "release" });
  });
});
