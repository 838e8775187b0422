import { describe, expect, it } from "vitest";
import {
  STRICT_SSRF_POLICY,
  checkFetchUrl,
  parseIpv4,
  parseIpv6,
} from "../../../functions/http/ssrf.ts";

const refused = (url: string, policy = STRICT_SSRF_POLICY) => {
  const result = checkFetchUrl(url, policy);
  return result.ok ? undefined : result.reason;
};

describe("SSRF guard", () => {
  it.each([
    ["http://127.0.0.1/", /loopback/],
    ["http://127.8.9.10:8080/x", /loopback/],
    ["http://localhost/", /loopback name/],
    ["http://LOCALHOST./", /loopback name/],
    ["http://api.localhost/", /internal name/],
    ["http://[::1]/", /loopback/],
    ["http://0.0.0.0/", /unspecified/],
    ["http://[::]/", /unspecified/],
    ["http://10.1.2.3/", /RFC 1918/],
    ["http://172.16.0.1/", /RFC 1918/],
    ["http://172.31.255.255/", /RFC 1918/],
    ["http://192.168.1.1/", /RFC 1918/],
    ["http://100.64.0.1/", /carrier-grade NAT/],
    ["http://100.127.255.254/", /carrier-grade NAT/],
    ["http://169.254.1.1/", /link-local/],
    ["http://169.254.169.254/latest/meta-data/", /metadata/],
    ["http://[fd00:ec2::254]/", /metadata/],
    ["http://metadata.google.internal/computeMetadata/v1/", /metadata/],
    ["http://[fe80::1]/", /link-local/],
    ["http://[fd12:3456::1]/", /unique-local/],
    ["http://[fc00::1]/", /unique-local/],
    ["http://[::ffff:127.0.0.1]/", /IPv4-mapped IPv6 form of a loopback/],
    ["http://[::ffff:7f00:1]/", /IPv4-mapped/],
    ["http://[::ffff:169.254.169.254]/", /IPv4-mapped IPv6 form of a cloud metadata/],
    ["http://[::ffff:0:10.0.0.1]/", /IPv4-translated/],
    ["http://[::127.0.0.1]/", /IPv4-compatible/],
    ["http://[64:ff9b::10.0.0.1]/", /NAT64/],
    ["http://[2002:7f00:1::]/", /6to4/],
    ["http://2130706433/", /loopback/],
    ["http://0x7f000001/", /loopback/],
    ["http://0x7f.0.0.1/", /loopback/],
    ["http://0177.0.0.1/", /loopback/],
    ["http://017700000001/", /loopback/],
    ["http://127.1/", /loopback/],
    ["http://0xa9.0xfe.0xa9.0xfe/", /metadata/],
    ["http://intranet/", /single-label/],
    ["http://printer.local/", /internal name/],
    ["http://db.corp.internal/", /internal name/],
    ["http://127.0.0.1.nip.io/", /wildcard-DNS name for a loopback/],
    ["http://app-10-0-0-1.sslip.io/", /wildcard-DNS name for a private/],
    ["http://localtest.me/", /resolves to loopback/],
    ["http://198.18.0.1/", /benchmarking/],
    ["http://224.0.0.1/", /multicast/],
    ["http://255.255.255.255/", /reserved/],
  ])("refuses %s", (url, reason) => {
    expect(refused(url)).toMatch(reason);
  });

  it.each([
    ["file:///etc/passwd", /only http and https/],
    ["ftp://example.com/", /only http and https/],
    ["javascript:alert(1)", /only http and https/],
    ["http://user:pw@example.com/", /credentials/],
    ["not a url", /not a valid absolute URL/],
  ])("refuses the non-web URL %s", (url, reason) => {
    expect(refused(url)).toMatch(reason);
  });

  it.each([
    "https://example.com/",
    "http://93.184.216.34/",
    "https://[2606:4700::1111]/",
    "https://8.8.8.8.nip.io/",
    "https://sub.example.co.uk:8443/a?b=c",
  ])("allows the public address %s", (url) => {
    expect(refused(url)).toBeUndefined();
  });

  it("allows exact allowedHostnames and the opt-in ranges, nothing broader", () => {
    const policy = { ...STRICT_SSRF_POLICY, allowedHostnames: ["127.0.0.1", "Wiki.Internal"] };
    expect(refused("http://127.0.0.1:9999/", policy)).toBeUndefined();
    expect(refused("http://wiki.internal/", policy)).toBeUndefined();
    expect(refused("http://127.0.0.2/", policy)).toMatch(/loopback/);
    expect(refused("http://other.internal/", policy)).toMatch(/internal/);
    expect(
      refused("http://198.18.0.1/", { ...STRICT_SSRF_POLICY, allowRfc2544BenchmarkRange: true }),
    ).toBeUndefined();
    expect(
      refused("http://[fd12::1]/", { ...STRICT_SSRF_POLICY, allowIpv6UniqueLocalRange: true }),
    ).toBeUndefined();
    expect(
      refused("http://[fd00:ec2::254]/", {
        ...STRICT_SSRF_POLICY,
        allowIpv6UniqueLocalRange: true,
      }),
    ).toMatch(/metadata/);
    expect(
      refused("http://10.0.0.1/", { ...STRICT_SSRF_POLICY, dangerouslyAllowPrivateNetwork: true }),
    ).toBeUndefined();
  });

  it("parses address spellings", () => {
    expect(parseIpv4("127.1")).toBe(0x7f000001);
    expect(parseIpv4("0x7f.1")).toBe(0x7f000001);
    expect(parseIpv4("256.1.1.1")).toBeUndefined();
    expect(parseIpv4("example")).toBeUndefined();
    expect(parseIpv6("::ffff:1.2.3.4")).toEqual([0, 0, 0, 0, 0, 0xffff, 0x0102, 0x0304]);
    expect(parseIpv6("1:2:3:4:5:6:7:8")).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(parseIpv6("1::2::3")).toBeUndefined();
  });
});
