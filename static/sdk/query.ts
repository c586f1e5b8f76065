// Turning a `where` object into the list query language (docs/api/datastore.md#queries): `field` or
// `field[op]` keys, arrays joined with commas for [in]/[nin], null as `field[null]=true`.

export function whereQuery(where: Record<string, unknown> | undefined): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(where ?? {})) {
    if (v === undefined) continue;
    if (v === null && !k.includes("[")) parts.push(`${enc(k)}[null]=true`);
    else parts.push(`${enc(k)}=${Array.isArray(v) ? v.map((x) => enc(String(x))).join(",") : enc(String(v))}`);
  }
  return parts.join("&");
}

/** Percent-encoding that keeps the brackets of operators readable (fetch sends them as they are). */
const enc = (s: string) => encodeURIComponent(s).replace(/%5B/g, "[").replace(/%5D/g, "]");
