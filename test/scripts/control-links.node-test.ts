import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CONTROL_LINKS_SCRIPT } from "../../web/control/script-links.ts";

/**
 * The control page's device-link part (web/control/script-links.ts) run against a minimal DOM: the
 * QR code is one SVG path with a square per dark module, the pairing code is shown as XXXX-XXXX,
 * and a waiting link schedules the view's reload. (The page in Chromium: control-page.node-test.ts.)
 */
interface Node {
  tag: string;
  attrs: Record<string, unknown>;
  children: unknown[];
}

function load() {
  const made: Node[] = [];
  const timers: number[] = [];
  const element = (tag: string) => {
    const node = {
      tag,
      attrs: {} as Record<string, unknown>,
      children: [] as unknown[],
      setAttribute(key: string, value: string) {
        node.attrs[key] = value;
      },
      appendChild(child: unknown) {
        node.children.push(child);
      },
    };
    made.push(node);
    return node;
  };
  const h = (tag: string, attrs: Record<string, unknown>, ...children: unknown[]) => ({
    tag,
    attrs,
    children,
  });
  const script = new Function(
    "document",
    "h",
    "when",
    "current",
    "rerender",
    "setTimeout",
    "clearTimeout",
    `${CONTROL_LINKS_SCRIPT}; return { linkParts: linkParts, qrSvg: qrSvg };`,
  );
  const api = script(
    { createElementNS: (_ns: string, tag: string) => element(tag) },
    h,
    (value: unknown) => String(value),
    null,
    () => undefined,
    (_fn: unknown, ms: number) => timers.push(ms),
    () => undefined,
  ) as { linkParts(connectors: unknown[]): unknown; qrSvg(rows: string[]): Node };
  return { api, made, timers };
}

describe("control page: device links", () => {
  it("draws the QR code as squares of its dark modules, on white", () => {
    const { api, made } = load();
    const svg = api.qrSvg(["1010", "0101", "1111", "0000"]);
    assert.equal(svg.attrs.viewBox, "0 0 4 4");
    const path = made.find((node) => node.tag === "path")!;
    assert.equal(String(path.attrs.d).match(/M/g)?.length, 8);
    assert.ok(String(path.attrs.d).startsWith("M0 0h1v1h-1zM2 0h1v1h-1z"));
    assert.equal(made.find((node) => node.tag === "rect")!.attrs.fill, "#fff");
  });

  it("shows the pairing code, the reason a link stopped, and reloads while a code waits", () => {
    const { api, timers } = load();
    const parts = JSON.stringify(
      api.linkParts([
        {
          channel: "whatsapp",
          accountId: "default",
          link: { state: "awaiting-pairing-code", pairingCode: "ABCD1234" },
        },
        {
          channel: "whatsapp",
          accountId: "work",
          link: { state: "logged-out", reason: "logged out from the phone (401)" },
        },
        { channel: "discord", accountId: "default", state: "ready" },
      ]),
    );
    assert.ok(parts.includes("ABCD-1234"));
    assert.ok(parts.includes("restart the companion to link again"));
    assert.ok(!parts.includes("discord"), "a connector without a link shows nothing here");
    assert.deepEqual(timers, [5000]);
  });
});
