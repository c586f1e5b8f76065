// njs header filter for deploy/nginx.conf: writes every Set-Cookie header of an answer under the name `Set-Cookie`.
// nginx passes upstream header names on as received, and Burrow may send `set-cookie` in lower case; the original
// Android SDK looks the session cookie up under the exact name `Set-Cookie`. Every cookie of the answer is kept.

function setCookieName(r) {
  const cookies = r.headersOut["Set-Cookie"];
  if (cookies && cookies.length) r.headersOut["Set-Cookie"] = cookies.slice();
}

export default { setCookieName };
