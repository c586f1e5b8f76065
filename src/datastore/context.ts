// The caller types now live in src/request-context.ts (below auth and datastore); re-exported here for the
// HTTP layer modules that still import them from this path.

export { type ApiContext, type Principal, ownerOf } from "../request-context.ts";
