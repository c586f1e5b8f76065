// Small SQL helpers shared by the schema migrator and the datastore: identifier quoting and error classes.

/** Quote an identifier. Names reaching here were validated against the schema name rules first. */
export function q(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** True when a libSQL/SQLite error is a UNIQUE or PRIMARY KEY violation (classified by code + message). */
export function isUniqueViolation(e: unknown): boolean {
  const err = e as { code?: string; message?: string };
  return typeof err?.message === "string" && /UNIQUE constraint failed|PRIMARY KEY/i.test(err.message)
    && (err.code === undefined || /CONSTRAINT/.test(err.code));
}
