// Small SQL helpers shared by the schema migrator and the datastore: identifier quoting.

/** Quote an identifier. Names reaching here were validated against the schema name rules first. */
export function q(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
