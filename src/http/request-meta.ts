// Facts about a request that routing would otherwise lose: the client address and the method on the
// request line before X-HTTP-Method-Override was applied (MAC signatures cover the original).

export interface RequestMeta {
  ip: string | null;
  originalMethod: string;
}

const metas = new WeakMap<Request, RequestMeta>();

export function setMeta(req: Request, meta: RequestMeta): void {
  metas.set(req, meta);
}

export function metaOf(req: Request): RequestMeta {
  return metas.get(req) ?? { ip: null, originalMethod: req.method };
}
