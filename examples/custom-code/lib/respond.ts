// Small helpers the example's methods share (bundled into one module by `burrow code deploy`).

export function badRequest(message: string): Burrow.Response {
  return { status: 400, body: { error: message } };
}

/** The JSON body of a POST or PUT, or null when it is not a JSON object. */
export function jsonBody(request: Burrow.Request): Record<string, unknown> | null {
  try {
    const v = JSON.parse(request.body || "{}");
    return v && typeof v === "object" && !Array.isArray(v) ? v : null;
  } catch {
    return null;
  }
}
