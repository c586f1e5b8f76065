// Modules a server may never need (mail, APNs certificates, Web Push, OpenID Connect, HTTP/2, outbound HTTP) are
// loaded on first use: a `require` inside a function is evaluated only when called, also in the compiled binary,
// so an idle server neither runs their top level nor touches the runtime code they pull in (node:http2, node:tls,
// node:net...). Measured on the binary: nodemailer alone adds 17 MB of RSS to a bare server, node-forge 12 MB.

/** Runs `load` the first time the returned function is called, and returns its value every time. */
export function onFirstUse<T>(load: () => T): () => T {
  let loaded = false;
  let value: T;
  return () => {
    if (!loaded) {
      value = load();
      loaded = true;
    }
    return value;
  };
}
