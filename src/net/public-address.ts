// Which addresses outbound requests to user-supplied URLs may reach: public unicast only. Private, loopback,
// link-local, CGNAT, documentation, multicast and reserved ranges are refused, IPv4 embedded in IPv6 included.
// `publicOnlyLookup` is a DNS lookup for node:http(s) that resolves a name and refuses it when any address is not
// public, so the address checked is the address connected to (no DNS-rebinding window); outbound requests that
// must reach only public addresses accept no other lookup (isPublicOnlyLookup).

import type Dns from "node:dns";
import type { LookupAddress } from "node:dns";
import { onFirstUse } from "../on-first-use.ts";
import { parseCidr, parseIp, type Cidr } from "./ip.ts";

const nodeDns = onFirstUse(() => require("node:dns") as typeof Dns);

const cidrs = (list: string[]): Cidr[] => list.map((c) => parseCidr(c)!);
/** IPv4 ranges that are not public unicast: this network, private, CGNAT, loopback, link-local, IETF, TEST-NETs, benchmarking, multicast, reserved. */
const BLOCKED_V4 = cidrs([
  "0.0.0.0/8",
  "10.0.0.0/8",
  "100.64.0.0/10",
  "127.0.0.0/8",
  "169.254.0.0/16",
  "172.16.0.0/12",
  "192.0.0.0/24",
  "192.0.2.0/24",
  "192.168.0.0/16",
  "198.18.0.0/15",
  "198.51.100.0/24",
  "203.0.113.0/24",
  "224.0.0.0/4",
  "240.0.0.0/4",
]);
/** IPv6 ranges that are not public unicast: unspecified, loopback, discard, Teredo, documentation, unique-local, link-local, site-local, multicast. */
const BLOCKED_V6 = cidrs(["::/128", "::1/128", "100::/64", "2001::/32", "2001:db8::/32", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8"]);
/** IPv6 ranges that carry an IPv4 address, and the offset of its 4 bytes: mapped, compatible, NAT64, 6to4. */
const EMBEDS_V4: [Cidr, number][] = [
  [parseCidr("::ffff:0:0/96")!, 12],
  [parseCidr("::/96")!, 12],
  [parseCidr("64:ff9b::/96")!, 12],
  [parseCidr("64:ff9b:1::/48")!, 12],
  [parseCidr("2002::/16")!, 2],
];

function inCidr(bytes: Uint8Array, cidr: Cidr): boolean {
  if (bytes.length !== cidr.bytes.length) return false;
  let bits = cidr.prefix;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((bytes[i]! & mask) !== (cidr.bytes[i]! & mask)) return false;
  }
  return true;
}

/** Whether an address (4 or 16 bytes) is outside public unicast. */
export function isPrivateAddress(bytes: Uint8Array): boolean {
  if (bytes.length === 4) return BLOCKED_V4.some((c) => inCidr(bytes, c));
  for (const [cidr, at] of EMBEDS_V4) if (inCidr(bytes, cidr)) return isPrivateAddress(bytes.subarray(at, at + 4));
  return BLOCKED_V6.some((c) => inCidr(bytes, c));
}

/** The hostname of a URL as compared: no brackets, no trailing dots, lower case. */
export function bareHost(hostname: string): string {
  return hostname
    .replace(/^\[|\]$/g, "")
    .replace(/\.+$/, "")
    .toLowerCase();
}

/** Why a host may not be contacted without resolving it (localhost, a non-public IP literal), or null. */
export function hostNotAllowed(hostname: string): string | null {
  const host = bareHost(hostname);
  if (host === "" || host === "localhost" || host.endsWith(".localhost")) return "localhost";
  const ip = parseIp(host);
  return ip && isPrivateAddress(ip) ? "private address" : null;
}

/** The error a refused name gives (code EADDRNOTPUBLIC), so callers can tell it from network failures. */
export class NotPublicAddress extends Error {
  readonly code = "EADDRNOTPUBLIC";
  constructor(host: string, address: string) {
    super(`${host} resolves to a private address (${address})`);
  }
}

type Resolve = (host: string, cb: (err: Error | null, addresses: LookupAddress[]) => void) => void;
const systemResolve: Resolve = (host, cb) => nodeDns().lookup(host, { all: true }, (err, addresses) => cb(err, addresses ?? []));

/** Every lookup publicOnlyLookup made: guarded requests accept no other. */
const publicOnlyLookups = new WeakSet<object>();

/** Whether a lookup was made by publicOnlyLookup (so it checks every address it answers). */
export function isPublicOnlyLookup(lookup: unknown): boolean {
  return typeof lookup === "function" && publicOnlyLookups.has(lookup);
}

/**
 * A `lookup` for node:http(s) requests: resolves every address of the name and fails with NotPublicAddress
 * when any of them is not public unicast; otherwise answers as node's lookup would (one or all addresses).
 */
export function publicOnlyLookup(resolve: Resolve = systemResolve, isPrivate: (bytes: Uint8Array) => boolean = isPrivateAddress) {
  // biome-ignore lint/suspicious/noExplicitAny: node's lookup callback takes (err, address, family) or (err, addresses)
  const lookup = (host: string, options: { all?: boolean } | number | undefined, cb: (...args: any[]) => void): void => {
    const all = typeof options === "object" && options !== null && options.all === true;
    const literal = parseIp(bareHost(host));
    const answer = (err: Error | null, addresses: LookupAddress[]) => {
      if (err) return cb(err);
      if (addresses.length === 0) return cb(Object.assign(new Error(`${host} has no address`), { code: "ENOTFOUND" }));
      for (const a of addresses) {
        const bytes = parseIp(a.address);
        if (!bytes || isPrivate(bytes)) return cb(new NotPublicAddress(host, a.address));
      }
      if (all) cb(null, addresses);
      else cb(null, addresses[0]!.address, addresses[0]!.family);
    };
    if (literal) answer(null, [{ address: bareHost(host), family: literal.length === 4 ? 4 : 6 }]);
    else resolve(host, answer);
  };
  publicOnlyLookups.add(lookup);
  return lookup;
}
