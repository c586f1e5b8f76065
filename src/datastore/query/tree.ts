// The query tree: what a GET (or DELETE) on /<schema> asks for, independent of any schema.
// Produced by parse.ts from the raw query string and headers; compiled to SQL by compile.ts.

export const OPERATORS = ["ne", "lt", "lte", "gt", "gte", "null", "empty", "in", "nin", "near", "within"] as const;
export type Op = "eq" | (typeof OPERATORS)[number];

export interface Clause {
  field: string;
  op: Op;
  /** The raw (percent-decoded) value. */
  value: string;
  /** The query parameter as written, for error messages. */
  key: string;
}

export interface OrderKey {
  field: string;
  desc: boolean;
}

export interface Range {
  start: number;
  /** Inclusive; null for the open form `objects=a-`. */
  end: number | null;
  /** Skip the total (the admin browser asks for it only on demand): Content-Range then ends in `/*`. */
  uncounted?: boolean;
}

export interface QueryTree {
  /** Clauses ANDed with everything (A in A AND (B OR C ...)). */
  where: Clause[];
  /** The one OR block: alternatives, each a group of ANDed clauses; null when there is none. */
  or: Clause[][] | null;
  /** X-Service-Select paths (split on dots), or null for every field. */
  select: string[][] | null;
  /** Relationship expansion depth, 0 to 3. */
  expand: number;
  orderBy: OrderKey[];
  range: Range | null;
}

/** The conditions alone (A AND (B OR ...)): what counts, deletes and updates by query take. */
export type Conditions = Pick<QueryTree, "where" | "or">;
