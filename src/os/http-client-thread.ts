// Making sure Bun's shared HTTP client thread is born at normal priority. Bun runs the I/O of every fetch (and of
// its S3 client) of the whole process on one native thread, "HTTP Client", that the first thread to fetch creates; a
// Linux thread inherits its creator's scheduling policy and nice value. The push delivery thread runs at SCHED_IDLE
// (delivery-thread.ts) and FCM fetches: had it fetched first, every later fetch of the process - S3 files, OpenID
// JWKS, FCM itself - would run at idle priority and could wait indefinitely while the API keeps the CPUs busy. (In
// Bun 1.4 the node:http, node:https and node:http2 clients - social sign-in, custom code's `http`, Web Push, APNs -
// run on the calling thread's own event loop instead.) So `burrow serve` calls startHttpClientThread() on the main
// thread at start-up, before any thread lowers its priority, and the delivery thread calls it again before lowering
// its own (harmless when the thread exists). The request is a fetch over a Unix socket that cannot exist: it creates
// the thread and fails at once (under 1 ms), with no network I/O.
// BURROW_NO_HTTP_THREAD_WARMUP=1 turns this off; it is a benchmark switch (scripts/bench/outbound.ts shows what
// the warm-up prevents), not a setting.

/** A socket path that can never exist: /dev/null is not a directory. */
const NO_SOCKET = "/dev/null/burrow-http-client-warm-up.sock";
let started: Promise<void> | null = null;

/** Create the HTTP client thread from the calling thread, if none exists yet; resolves once it has. */
export function startHttpClientThread(): Promise<void> {
  if (started) return started;
  if (process.platform !== "linux" || process.env.BURROW_NO_HTTP_THREAD_WARMUP === "1") return (started = Promise.resolve());
  started = (async () => {
    try {
      await fetch("http://localhost/", { unix: NO_SOCKET, signal: AbortSignal.timeout(2000) });
    } catch {
      // Expected: there is no such socket. The thread that would have carried the request exists now.
    }
  })();
  return started;
}
