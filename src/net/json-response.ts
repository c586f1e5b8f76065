// JSON responses with the API's content type. A leaf, so that modules below the HTTP layer (the local file
// store serving /_files/...) can answer in JSON without importing src/http.

export const JSON_TYPE = "application/json; charset=utf-8";

/** `data` serialized as a JSON response with the API's content type. */
export function jsonResponse(data: unknown, status: number): Response {
  return new Response(JSON.stringify(data), { status, headers: { "content-type": JSON_TYPE } });
}
