// A small router for Burrow's fixed URL space: static segments and `:param` segments, static first.
// Route files declare routes with get/post/put/delete; handlers get the Request and decoded params.

import { ApiError } from "../errors.ts";

export interface RouteContext<Params extends string = string> {
  request: Request;
  params: Record<Params, string>;
}
export type Handler<Params extends string = string> = (ctx: RouteContext<Params>) => Response | Promise<Response>;

/** The parameter names of a route pattern: "/a/:schema/:id" -> "schema" | "id". */
type ParamNames<P extends string> = P extends `${string}:${infer N}/${infer Rest}` ? N | ParamNames<`/${Rest}`> : P extends `${string}:${infer N}` ? N : never;

interface Route {
  method: string;
  path: string;
  handler: Handler;
}

/** A group of routes under a common prefix, declared in one route file. */
export class Routes {
  readonly list: Route[] = [];
  constructor(private readonly prefix = "") {}

  get<P extends string>(path: P, handler: Handler<ParamNames<P>>): this {
    return this.add("GET", path, handler);
  }
  post<P extends string>(path: P, handler: Handler<ParamNames<P>>): this {
    return this.add("POST", path, handler);
  }
  put<P extends string>(path: P, handler: Handler<ParamNames<P>>): this {
    return this.add("PUT", path, handler);
  }
  delete<P extends string>(path: P, handler: Handler<ParamNames<P>>): this {
    return this.add("DELETE", path, handler);
  }
  private add<P extends string>(method: string, path: P, handler: Handler<ParamNames<P>>): this {
    this.list.push({ method, path: this.prefix + path, handler: handler as unknown as Handler });
    return this;
  }
}

interface Node {
  statics: Map<string, Node>;
  param: { name: string; node: Node } | null;
  handlers: Map<string, Handler>;
}

const newNode = (): Node => ({ statics: new Map(), param: null, handlers: new Map() });

export type Match = { handler: Handler; params: Record<string, string> } | { allowed: string[] } | null;

export class Router {
  private readonly root = newNode();

  constructor(groups: readonly Routes[]) {
    for (const g of groups) for (const r of g.list) this.insert(r);
  }

  private insert({ method, path, handler }: Route): void {
    let node = this.root;
    for (const seg of segments(path)) {
      if (seg.startsWith(":")) {
        const name = seg.slice(1);
        if (node.param && node.param.name !== name) throw new Error(`route ${path}: parameter :${name} clashes with :${node.param.name}`);
        node.param ??= { name, node: newNode() };
        node = node.param.node;
      } else {
        if (!node.statics.has(seg)) node.statics.set(seg, newNode());
        node = node.statics.get(seg)!;
      }
    }
    if (node.handlers.has(method)) throw new Error(`route ${method} ${path} is declared twice`);
    node.handlers.set(method, handler);
  }

  /** The handler for a method and raw (still percent-encoded) path; `allowed` when only the method is wrong. */
  find(method: string, rawPath: string): Match {
    const segs = segments(rawPath);
    const values: string[] = [];
    const names: string[] = [];
    const node = walk(this.root, segs, 0, names, values);
    if (!node) return null;
    const handler = node.handlers.get(method);
    if (!handler) return { allowed: [...node.handlers.keys()] };
    const params: Record<string, string> = {};
    for (let i = 0; i < names.length; i++) {
      const v = values[i]!;
      try {
        params[names[i]!] = v.includes("%") ? decodeURIComponent(v) : v;
      } catch {
        throw new ApiError(400, "malformed percent-encoding in the URL path");
      }
    }
    return { handler, params };
  }
}

/**
 * Depth-first: a static segment wins over a parameter, and a parameter is tried when the static path fails.
 * A parameter in the first segment never matches a segment starting with "_" (reserved for /_admin, /_files, ...).
 */
function walk(node: Node, segs: string[], i: number, names: string[], values: string[]): Node | null {
  if (i === segs.length) return node.handlers.size ? node : null;
  const seg = segs[i]!;
  const child = node.statics.get(seg);
  if (child) {
    const found = walk(child, segs, i + 1, names, values);
    if (found) return found;
  }
  // The first segment is a schema or method name, which never starts with "_": those paths are the system's.
  if (node.param && seg !== "" && !(i === 0 && seg.startsWith("_"))) {
    names.push(node.param.name);
    values.push(seg);
    const found = walk(node.param.node, segs, i + 1, names, values);
    if (found) return found;
    names.pop();
    values.pop();
  }
  return null;
}

/** "/a/b/" -> ["a", "b"]; one trailing slash is ignored. */
function segments(path: string): string[] {
  const trimmed = path.endsWith("/") && path.length > 1 ? path.slice(1, -1) : path.slice(1);
  return trimmed === "" ? [] : trimmed.split("/");
}
