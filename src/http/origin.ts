// Where a request came from and what the client addressed: scheme, host and port as signed by MAC and OAuth 1.0
// clients, and the client IP for rate limits. Forwarded headers count only from a --trusted-proxy peer.

import type { Cidr } from "../net/ip.ts";
import { cidrContains } from "../net/ip.ts";
import type { RequestInfo } from "./request-meta.ts";

interface Origin {
  scheme: "http" | "https";
  host: string;
  /** The port the client named explicitly, or null (then the scheme's default applies). */
  port: number | null;
}

const first = (v: string | null) => (v === null ? null : (v.split(",")[0]?.trim() ?? null));

export function defaultPort(scheme: "http" | "https"): number {
  return scheme === "https" ? 443 : 80;
}

const HOST_RE = /^(\[[^\]]+\]|[^:/]+)(?::(\d{1,5}))?$/;

const authorities = new Map<string, { host: string; port: number | null }>();

/** Host (lower case, IPv6 without brackets) and explicit port of an authority; memoized, clients repeat theirs. */
function parseAuthority(authority: string): { host: string; port: number | null } {
  let parsed = authorities.get(authority);
  if (!parsed) {
    const hm = HOST_RE.exec(authority);
    parsed = { host: (hm?.[1] ?? authority).toLowerCase().replace(/^\[|\]$/g, ""), port: hm?.[2] ? Number(hm[2]) : null };
    if (authorities.size >= 256) authorities.clear();
    authorities.set(authority, parsed);
  }
  return parsed;
}

/** Whether the connection comes from a --trusted-proxy (the peer is only asked when proxies are configured). */
function fromTrustedProxy(req: Request, info: RequestInfo, trusted: readonly Cidr[]): boolean {
  if (trusted.length === 0) return false;
  const peer = info.peer(req);
  return peer !== null && trusted.some((c) => cidrContains(c, peer));
}

/** Scheme, host and port the client addressed: from the request, or from X-Forwarded-* behind a trusted proxy. */
export function requestOrigin(req: Request, info: RequestInfo, trusted: readonly Cidr[]): Origin {
  const url = info.original(req).url;
  let scheme: "http" | "https" = url.startsWith("https:") ? "https" : "http";
  // The authority of the URL Bun built from the Host header (cheaper than a full URL parse per request).
  const authority = url.slice(url.indexOf("//") + 2, url.indexOf("/", url.indexOf("//") + 2) >>> 0);
  let { host, port } = parseAuthority(authority);
  if (fromTrustedProxy(req, info, trusted)) {
    const proto = first(req.headers.get("x-forwarded-proto"))?.toLowerCase();
    if (proto === "http" || proto === "https") scheme = proto;
    const fwdHost = first(req.headers.get("x-forwarded-host"));
    if (fwdHost) {
      const m = /^(\[[^\]]+\]|[^:]+)(?::(\d{1,5}))?$/.exec(fwdHost);
      if (m) {
        host = m[1]!.replace(/^\[|\]$/g, "");
        port = m[2] ? Number(m[2]) : null;
      }
    } else if (proto) port = null;
    const fwdPort = first(req.headers.get("x-forwarded-port"));
    if (fwdPort && /^\d{1,5}$/.test(fwdPort)) port = Number(fwdPort);
  }
  if (port !== null && port === defaultPort(scheme)) port = null;
  return { scheme, host, port };
}

/** An origin as a URL prefix: `https://host`, `http://[::1]:8080`. */
export function originText(o: Origin): string {
  const host = o.host.includes(":") ? `[${o.host}]` : o.host;
  return `${o.scheme}://${host}${o.port === null ? "" : `:${o.port}`}`;
}

/**
 * The base of file links in an answer: --files-url, else --public-url, else the origin this request addressed
 * (forwarded by a trusted proxy). Links are made per answer and never stored, so a forged Host reaches only the
 * forger's own answer.
 */
export function fileLinkBase(
  config: { filesUrl: string | null; publicUrl: string | null; trustedProxy: readonly Cidr[] },
  req: Request,
  info: RequestInfo,
): string {
  return config.filesUrl ?? config.publicUrl ?? originText(requestOrigin(req, info, config.trustedProxy));
}

/** The client's address: the peer, or behind a trusted proxy the last X-Forwarded-For hop that is not trusted. */
export function clientIp(req: Request, info: RequestInfo, trusted: readonly Cidr[]): string | null {
  const peer = info.peer(req);
  if (!fromTrustedProxy(req, info, trusted)) return peer;
  const hops = (req.headers.get("x-forwarded-for") ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  let ip = peer;
  for (let i = hops.length - 1; i >= 0; i--) {
    ip = hops[i]!;
    if (!trusted.some((c) => cidrContains(c, hops[i]!))) break;
  }
  return ip;
}

/** Ports a signature may have used: the explicit one, or the scheme's default and then the other default. */
export function candidatePorts(o: Origin): number[] {
  if (o.port !== null) return [o.port];
  return o.scheme === "https" ? [443, 80] : [80, 443];
}

/** The path and query of an absolute URL ("/" when it has no path). */
export function targetOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  return start < 0 ? "/" : url.slice(start);
}

/** The path of an absolute URL, without its query. */
export function pathOf(url: string): string {
  const target = targetOf(url);
  const q = target.indexOf("?");
  return q < 0 ? target : target.slice(0, q);
}

/** The request-target as received (path and query), for signature checks. */
export function rawTarget(req: Request, info: RequestInfo): string {
  return targetOf(info.original(req).url);
}
