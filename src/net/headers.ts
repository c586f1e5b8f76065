// What a header supplied by custom code may be: a name that is an HTTP token, and a value on one line (no CR,
// LF or NUL) of bounded length. Shared by the http service's requests and methods' responses.

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$/;
export const MAX_HEADER_VALUE = 16384;

export function isHeaderName(name: string): boolean {
  return TOKEN.test(name);
}

export function isHeaderValue(value: unknown): value is string {
  return typeof value === "string" && value.length <= MAX_HEADER_VALUE && !/[\r\n\0]/.test(value);
}
