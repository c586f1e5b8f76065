// MAC signatures (docs/api/signing.md): Base64(HMAC-SHA1(mac_key, normalized string)) made with Web Crypto over
// `ts\nnonce\nMETHOD\nrequest-URI\nhost\nport\n\n`, the URI and host exactly as fetch will send them.

const utf8 = new TextEncoder();

/** Base64 of bytes, in slices so large files do not overflow the argument list. */
export function base64(bytes: Uint8Array): string {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

function subtle(): SubtleCrypto {
  const s = globalThis.crypto?.subtle;
  if (!s) throw new Error("crypto.subtle is missing: MAC tokens need Web Crypto (React Native: install react-native-quick-crypto)");
  return s;
}

let cached: [string, Promise<CryptoKey>] | null = null;

function hmacKey(macKey: string): Promise<CryptoKey> {
  if (cached?.[0] !== macKey)
    cached = [macKey, subtle().importKey("raw", utf8.encode(macKey), { name: "HMAC", hash: "SHA-1" }, false, ["sign"])];
  return cached[1];
}

/** The Authorization header for one request; `skew` is seconds to add to the local clock. */
export async function macAuthorization(id: string, macKey: string, method: string, url: URL, skew: number): Promise<string> {
  const ts = String(Math.floor(Date.now() / 1000 + skew));
  const nonce = base64(globalThis.crypto.getRandomValues(new Uint8Array(12))).replace(/[+/=]/g, "");
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase();
  const normalized = `${ts}\n${nonce}\n${method.toUpperCase()}\n${url.pathname}${url.search}\n${host}\n${port}\n\n`;
  const mac = base64(new Uint8Array(await subtle().sign("HMAC", await hmacKey(macKey), utf8.encode(normalized))));
  return `MAC id="${id}",ts="${ts}",nonce="${nonce}",mac="${mac}"`;
}
