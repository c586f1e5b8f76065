// Facts about a request that routing would otherwise lose: the request as it arrived before
// X-HTTP-Method-Override rewrote it (MAC signatures cover the original method) or a second listener mounted it
// under a prefix (signatures cover the path the client sent), and the client address, looked up lazily from the
// server that accepted the connection.

export interface RequestInfo {
  /** The request as received on the wire. */
  original(req: Request): Request;
  /** The peer address of the connection (before any trusted-proxy interpretation), or null in-process. */
  peer(req: Request): string | null;
}

export interface RequestInfoWriter extends RequestInfo {
  /** Record that `next` was made from `from` (method override). */
  rewrote(next: Request, from: Request): void;
  /** Record that `next` is `from` mounted under a prefix (it may still be overridden). */
  mounted(next: Request, from: Request): void;
  /** Whether this request was made by a method override (it is not overridden again). */
  isRewritten(req: Request): boolean;
}

export function createRequestInfo(peer: (req: Request) => string | null = () => null): RequestInfoWriter {
  const originals = new WeakMap<Request, Request>();
  const overridden = new WeakSet<Request>();
  const original = (req: Request) => originals.get(req) ?? req;
  return {
    original,
    peer: (req) => peer(original(req)),
    rewrote(next, from) {
      originals.set(next, original(from));
      overridden.add(next);
    },
    mounted(next, from) {
      originals.set(next, original(from));
    },
    isRewritten: (req) => overridden.has(req),
  };
}
