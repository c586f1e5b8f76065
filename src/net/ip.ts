// IP address and CIDR parsing and matching (IPv4 and IPv6), used for --trusted-proxy and rate limits.

export interface Cidr {
  bytes: Uint8Array;
  prefix: number;
}

export function parseIp(s: string): Uint8Array | null {
  if (s.startsWith("::ffff:") && s.includes(".")) return parseIp(s.slice(7));
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (v4) {
    const parts = v4.slice(1).map(Number);
    return parts.every((p) => p <= 255) ? new Uint8Array(parts) : null;
  }
  if (!/^[0-9a-fA-F:]+$/.test(s) || !s.includes(":")) return null;
  const halves = s.split("::");
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(":") : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(":") : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const groups = [...head, ...Array(halves.length === 2 ? missing : 0).fill("0"), ...tail];
  const out = new Uint8Array(16);
  for (let i = 0; i < 8; i++) {
    const g = groups[i]!;
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
    const n = parseInt(g, 16);
    out[i * 2] = n >> 8;
    out[i * 2 + 1] = n & 255;
  }
  return out;
}

/** Whether an address is loopback (127.0.0.0/8, ::1, or an IPv4-mapped loopback). */
export function isLoopbackIp(s: string): boolean {
  const b = parseIp(s);
  if (!b) return false;
  if (b.length === 4) return b[0] === 127;
  return b.every((x, i) => (i < 15 ? x === 0 : x === 1));
}

export function parseCidr(s: string): Cidr | null {
  const [addr, bits, extra] = s.split("/");
  if (extra !== undefined || !addr) return null;
  const bytes = parseIp(addr);
  if (!bytes) return null;
  const max = bytes.length * 8;
  if (bits !== undefined && !/^\d{1,3}$/.test(bits)) return null;
  const prefix = bits === undefined ? max : Number(bits);
  return prefix <= max ? { bytes, prefix } : null;
}

export function cidrContains(cidr: Cidr, ip: string): boolean {
  const bytes = parseIp(ip);
  if (!bytes || bytes.length !== cidr.bytes.length) return false;
  let bits = cidr.prefix;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((bytes[i]! & mask) !== (cidr.bytes[i]! & mask)) return false;
  }
  return true;
}

/**
 * The key a client address counts under in per-IP rate limits: an IPv4 address itself (also when IPv4-mapped),
 * an IPv6 address by its /64, the smallest block one subscriber is usually given (one host can use every address
 * in it, so counting single IPv6 addresses would limit nothing). Anything unparsable counts as it is.
 */
export function rateKeyOfIp(ip: string): string {
  const bytes = parseIp(ip);
  if (!bytes) return ip;
  if (bytes.length === 4) return bytes.join(".");
  const groups: string[] = [];
  for (let i = 0; i < 8; i += 2) groups.push(((bytes[i]! << 8) | bytes[i + 1]!).toString(16));
  return `${groups.join(":")}::/64`;
}
