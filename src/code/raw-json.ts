// A service result that is already JSON text (a datastore answer rendered by SQLite): handed to the guest as
// is, instead of being parsed on the host and serialized again.

export class RawJson {
  constructor(readonly text: string) {}
}

/** A service value as the JSON text the guest receives (undefined stays undefined: no value). */
export function jsonText(v: unknown): string | undefined {
  return v === undefined ? undefined : v instanceof RawJson ? v.text : JSON.stringify(v);
}
