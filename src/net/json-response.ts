// The API's JSON content type. A leaf, so that modules below the HTTP layer (the local file store serving
// /_files/...) answer JSON with the same type without importing src/http.

export const JSON_TYPE = "application/json; charset=utf-8";
