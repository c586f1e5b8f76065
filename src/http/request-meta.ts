// Facts about a request that routing would otherwise lose: the request as it arrived before
// X-HTTP-Method-Override or HEAD rewrote it (MAC signatures cover the original method), and the client
// address, looked up lazily from the server that accepted the connection.

export interface RequestInfo {
  /** The request as received on the wire. */
  original(req: Request): Request;
  /** The peer address of the connection (before any trusted-proxy interpretation), or null in-process. */
  peer(req: Request): string | null;
}

export function createRequestInfo(peer: (req: Request) => string | null = () => null): RequestInfo & { rewrote(next: Request, from: Request): void } {
  const originals = new WeakMap<Request, Request>();
  const original = (req: Request) => originals.get(req) ?? req;
  return {
    original,
    peer: (req) => peer(original(req)),
    rewrote(next, from) {
      originals.set(next, original(from));
    },
  };
}
