// Custom code's `data` service, host side: a table of operations, each with its declared arguments (name, whether
// it may be left out, and the check that turns the guest's JSON value into what the datastore takes), and what it
// runs. Arguments are checked in order (data-args.ts, data-query.ts), so a refusal names the first bad one; every
// refusal is prefixed with the operation (`data.query: where.age.gt: expected ...`). Objects go back as the JSON
// text SQLite rendered (RawJson), never parsed and serialized again. Calls run as the server: permissions do not
// apply (the call's ApiContext has a system principal).

import type { Datastore } from "../../datastore/datastore.ts";
import type { Conditions } from "../../datastore/query/tree.ts";
import { ApiError, badRequest, notFound } from "../../errors.ts";
import type { ApiContext } from "../../request-context.ts";
import { RawJson } from "../raw-json.ts";
import { absent, bad, fieldName, got, objectKey, objects, plainObject, noProtoKeys, scalars, schemaName, text } from "./data-args.ts";
import { cascadeArg, changesBody, conditionsArg, optionsArg, queryTree, shapeArg } from "./data-query.ts";

/** One declared argument: its name (in refusals), whether it may be left out, and its check. */
interface Arg {
  name: string;
  optional?: boolean;
  parse(value: unknown, ctx: ApiContext): unknown;
}

interface Operation {
  args: readonly Arg[];
  /** Runs with the checked arguments, in declared order. */
  // biome-ignore lint/suspicious/noExplicitAny: each operation destructures its own checked argument types
  run(data: Datastore, ctx: ApiContext, args: any[]): Promise<unknown> | unknown;
}

const arg = (name: string, parse: Arg["parse"], optional = false): Arg => ({ name, parse, optional });
const optional = (name: string, parse: Arg["parse"]) => arg(name, parse, true);

/** A schema name (creates may name a schema development infers). */
const schema = arg("schema", (v) => schemaName(v));
/** A schema of the call's API version. */
const known = arg("schema", (v, ctx) => {
  const name = schemaName(v);
  if (!ctx.schemas.schemas.has(name)) throw notFound(`schema "${name}" does not exist`);
  return name;
});
const id = arg("id", (v) => objectKey("id", v));
const field = arg("field", (v) => fieldName("field", v));
const object = arg("object", (v) => {
  const o = plainObject("object", v);
  noProtoKeys("object", o);
  return o;
});
const objectList = (name: string, min: number) =>
  arg(name, (v) => {
    const list = objects(name, v);
    if (list.length < min) throw bad(name, "expected at least one object");
    return list;
  });
const values = arg("values", (v) => scalars("values", v));
const conditions = (required: boolean) => (required ? arg : optional)("query", (v) => conditionsArg(v, required));
const changes = arg("changes", changesBody);

/** The 404 of a missing object answered as a value (the schema's existence is checked before). */
async function orIfMissing<T, U>(p: Promise<T>, missing: U): Promise<T | U> {
  try {
    return await p;
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return missing;
    throw e;
  }
}

const raw = (json: string | null) => (json === null ? null : new RawJson(json));

const OPERATIONS: Record<string, Operation> = {
  create: {
    args: [schema, object],
    run: async (data, ctx, [s, o]) => new RawJson(await data.create(ctx, s, o as Record<string, unknown>)),
  },
  createMany: { args: [schema, objectList("objects", 0)], run: (data, ctx, [s, list]) => data.create(ctx, s, list) },
  read: {
    args: [known, id, optional("shape", shapeArg)],
    run: async (data, ctx, [s, key, shape]) => raw(await orIfMissing(data.get(ctx, s, key, shape), null)),
  },
  query: {
    args: [known, optional("query", queryTree)],
    run: async (data, ctx, [s, { tree, nothing }]) => (nothing ? [] : new RawJson((await data.list(ctx, s, tree)).body)),
  },
  count: { args: [known, conditions(false)], run: (data, ctx, [s, c]) => data.count(ctx, s, c) },
  update: {
    args: [known, id, changes, optional("options", optionsArg)],
    run: async (data, ctx, [s, key, body, where]) =>
      raw(where ? await data.updateIf(ctx, s, key, body, where) : await orIfMissing(data.update(ctx, s, key, body), null)),
  },
  updateWhere: { args: [known, conditions(true), changes], run: (data, ctx, [s, c, body]) => data.updateWhere(ctx, s, c, body) },
  delete: {
    args: [known, id],
    run: (data, ctx, [s, key]) =>
      orIfMissing(
        data.remove(ctx, s, key).then(() => true),
        false,
      ),
  },
  deleteWhere: {
    args: [known, conditions(true)],
    run: (data, ctx, [s, c]: [string, Conditions]) => {
      if (c.where.length === 0 && !c.or) throw bad("query", "at least one condition is needed; deleting every object is refused");
      return data.removeWhere(ctx, s, c, { missingKeyIs404: false });
    },
  },
  addRelated: {
    args: [known, id, field, values],
    run: async (data, ctx, [s, key, f, list]) => new RawJson(await data.append(ctx, s, key, f, list)),
  },
  createRelated: {
    args: [known, id, field, objectList("objects", 1)],
    run: (data, ctx, [s, key, f, list]) => data.createRelated(ctx, s, key, f, list),
  },
  removeRelated: {
    args: [known, id, field, values, optional("options", cascadeArg)],
    run: async (data, ctx, [s, key, f, list, cascade]) => void (await data.pull(ctx, s, key, f, list.map(text), cascade)),
  },
  schemas: { args: [], run: (_data, ctx) => [...ctx.schemas.schemas.keys()].sort() },
  userSchema: {
    args: [],
    run: (_data, ctx) =>
      [...ctx.schemas.schemas.values()]
        .filter((s) => s.def.user)
        .map((s) => s.name)
        .sort()[0] ?? null,
  },
};

export const DATA_OPS: readonly string[] = Object.keys(OPERATIONS);

/** The declared arguments checked in order: too many is refused, a required one left out is `<name>: missing`. */
function checkedArgs(op: Operation, args: unknown[], ctx: ApiContext): unknown[] {
  const names = op.args.map((a) => a.name);
  if (args.length > names.length)
    throw badRequest(`takes at most ${names.length} argument${names.length === 1 ? "" : "s"} (${names.join(", ")}), got ${args.length}`);
  op.args.forEach((a, i) => {
    if (!a.optional && absent(args[i])) throw bad(a.name, "missing");
  });
  return op.args.map((a, i) => a.parse(args[i], ctx));
}

/** The op named once in front of every refusal: `data.query: where.age.gt: expected ...`. */
function named(op: string, e: unknown): unknown {
  if (!(e instanceof ApiError)) return e;
  return new ApiError(e.status, `data.${op}: ${e.message}`, { description: e.description, headers: e.headers, debug: e.debug, cause: e });
}

/** Runs one data operation for a method call; `ctx` is the call's ApiContext (already with a system principal, so permissions are ignored). */
export function dataService(data: Datastore, ctx: ApiContext): (op: string, args: unknown[]) => Promise<unknown> {
  return async (op, args) => {
    const operation = typeof op === "string" && Object.hasOwn(OPERATIONS, op) ? OPERATIONS[op]! : null;
    if (operation === null) {
      const shown = typeof op === "string" ? JSON.stringify(op.length > 40 ? `${op.slice(0, 40)}…` : op) : got(op);
      throw badRequest(`data has no operation ${shown}; operations: ${DATA_OPS.join(", ")}`);
    }
    try {
      if (!Array.isArray(args)) throw badRequest(`the arguments are an array, got ${got(args)}`);
      return await operation.run(data, ctx, checkedArgs(operation, args, ctx));
    } catch (e) {
      throw named(op, e);
    }
  };
}
