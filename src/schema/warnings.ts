// Warnings about schema definitions that are legal but unsafe in production: a schema whose objects anyone
// with the public key may change or delete. Printed at start-up and on every deploy. Pure.

import type { SchemaDef } from "./definition.ts";

/** One line per schema whose update or delete permission is "open". */
export function openWriteWarnings(defs: Iterable<SchemaDef>): string[] {
  const lines: string[] = [];
  for (const d of defs) {
    const ops = (["update", "delete"] as const).filter((op) => d.permissions[op] === "open");
    if (ops.length === 0) continue;
    const what = ops.length === 2 ? "change and delete" : ops[0] === "update" ? "change" : "delete";
    lines.push(
      `production schema "${d.name}" lets anyone with the public key ${what} its objects (${ops.map((op) => `${op}: open`).join(", ")}); consider "owner" or stricter`,
    );
  }
  return lines;
}
