// A service result that is already JSON text (a datastore answer rendered by SQLite): handed to the guest as
// is, instead of being parsed on the host and serialized again.

export class RawJson {
  constructor(readonly text: string) {}
}
