// The content security policy of the server's pages (the admin console, the status page, the API reference):
// only the page's own script runs, named by a nonce drawn afresh for every response. No host and no 'self' in
// script-src, so no other URL of this origin (a file uploaded under /_files/ with a JavaScript type, an API
// answer) can be run as a script by markup injected into a page.

/** A fresh nonce: 16 random bytes in base64 (CSP's base64-value). */
export function newNonce(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("base64");
}

/** The policy of a page whose script tags carry `nonce`; `images` is another origin it may show images from. */
export function pagePolicy(nonce: string, images: string | null = null): string {
  return [
    "default-src 'self'",
    // Without 'strict-dynamic': a script element added at run time, whoever adds it, needs the nonce too.
    `script-src 'nonce-${nonce}'`,
    // Inline style attributes: Preact sets them, and the API reference's web component styles its shadow root.
    "style-src 'self' 'unsafe-inline'",
    `img-src 'self' data: blob:${images ? ` ${images}` : ""}`,
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'self'",
  ].join("; ");
}

/**
 * A page's HTML cut where a nonce attribute goes (after each `<script` and each `<link rel="modulepreload"`), so
 * a response joins the pieces with ` nonce="…"` and nothing else. The HTML is the bundler's output for our own
 * pages, not user content.
 */
export function nonceSlots(html: string): string[] {
  const pieces: string[] = [];
  let from = 0;
  for (const m of html.matchAll(/<script\b|<link\b(?=[^>]*\brel\s*=\s*["']?modulepreload\b)/gi)) {
    const at = m.index + m[0].length;
    pieces.push(html.slice(from, at));
    from = at;
  }
  pieces.push(html.slice(from));
  return pieces;
}

/** The pieces of `nonceSlots` joined with one nonce. */
export function withNonce(pieces: string[], nonce: string): string {
  return pieces.join(` nonce="${nonce}"`);
}
