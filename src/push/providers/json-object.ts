// Parsing a credential or token given as JSON text into an object, with one-line errors naming what it is.

/** `text` parsed as a JSON object; throws "<what> is not valid JSON" or "<what> must be a JSON object". */
export function parseJsonObject(text: string, what: string): Record<string, unknown> {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new Error(`${what} is not valid JSON`);
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) throw new Error(`${what} must be a JSON object`);
  return data as Record<string, unknown>;
}
