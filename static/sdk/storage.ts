// Where the signed-in user's tokens are kept: in memory (the default), in the browser's localStorage, or in any
// store given as {get, set, remove} (sync or async: AsyncStorage, a keychain, a file).

export interface TokenStore {
  get(key: string): string | null | undefined | Promise<string | null | undefined>;
  set(key: string, value: string): unknown;
  remove(key: string): unknown;
}

/** The tokens of a login, with the user schema they belong to and when the access token expires (ms). */
export interface TokenSet {
  access_token: string;
  mac_key?: string;
  refresh_token: string;
  token_type: string;
  expires_at: number;
  schema: string;
  user?: string;
}

export function tokenStore(option: "memory" | "local" | TokenStore | undefined): TokenStore {
  if (option && typeof option === "object") return option;
  if (option === "local") {
    const ls = (globalThis as { localStorage?: Storage }).localStorage;
    if (!ls) throw new Error('storage "local" needs localStorage; pass {get, set, remove} instead');
    return { get: (k) => ls.getItem(k), set: (k, v) => ls.setItem(k, v), remove: (k) => ls.removeItem(k) };
  }
  const m = new Map<string, string>();
  return { get: (k) => m.get(k), set: (k, v) => m.set(k, v), remove: (k) => m.delete(k) };
}
