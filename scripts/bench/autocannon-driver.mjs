// Runs one autocannon load (spec as JSON on stdin) in its own Node process and prints a JSON result.
import autocannon from "autocannon";

const chunks = [];
for await (const c of process.stdin) chunks.push(c);
const spec = JSON.parse(Buffer.concat(chunks).toString());
const result = await autocannon({
  url: spec.base,
  connections: spec.connections,
  duration: spec.seconds,
  timeout: 5,
  requests: [
    {
      method: spec.method,
      headers: spec.headers,
      body: spec.body,
      setupRequest(req) {
        req.path = spec.paths[Math.floor(Math.random() * spec.paths.length)];
        return req;
      },
    },
  ],
});
process.stdout.write(
  JSON.stringify({
    tool: "autocannon 9",
    requests: result.requests.total,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx,
  }),
);
