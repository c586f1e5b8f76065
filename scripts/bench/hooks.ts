// Hooks benchmark (built binary, loopback, one run): creates per second into a schema with a trivial beforeCreate
// beside a schema without hooks, interleaved rounds; creates at full speed into a schema whose afterCreate writes an
// audit object, with the after-hook queue's backlog sampled every 5 s (it must not grow); and GET by key on a schema
// without hooks while another schema has them, beside the same with no code at all.
// Usage: bun run scripts/bench/hooks.ts [--seconds 5] [--rounds 5] [--queue-seconds 60] [--build] [--binary path] [--write]

import { parseArgs } from "node:util";
import { ensureBinary, machine, table, writeSection } from "./env.ts";
import { runLoad } from "./load.ts";
import { startBenchServer } from "./server.ts";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "5" },
    rounds: { type: "string", default: "5" },
    "queue-seconds": { type: "string", default: "60" },
    build: { type: "boolean", default: false },
    write: { type: "boolean", default: false },
    binary: { type: "string" },
  },
});
const SECONDS = Math.min(60, Math.max(1, Number(values.seconds)));
const ROUNDS = Math.min(15, Math.max(1, Number(values.rounds)));
const QUEUE_SECONDS = Math.min(600, Math.max(5, Number(values["queue-seconds"])));
const exe = values.binary ?? ensureBinary(values.build!);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const CODE = `export const hooks = {
  hooked: { beforeCreate(change) {} },
  audited: { async afterCreate(change, services) { await services.data.create("audit", { ref: change.key, change: change.id }); } },
};`;

const server = await startBenchServer(exe);
try {
  const open = { create: "open", read: "open", update: "open", delete: "open" };
  const fields = { title: { type: "string" }, n: { type: "integer" } };
  for (const name of ["plain", "hooked", "audited", "item"]) await server.putSchema(name, { fields, permissions: open });
  await server.putSchema("audit", { fields: { ref: { type: "string" }, change: { type: "integer" } }, permissions: open });
  const keys = await server.seed("item", 10_000, (i) => ({ title: `item ${i}`, n: i }));
  const body = JSON.stringify({ title: "a benchmark object", n: 7 });
  const creates = (schema: string) =>
    runLoad({ base: server.url, method: "POST", paths: [`/${schema}`], headers: server.headers, body, connections: 50, seconds: SECONDS });
  const gets = () =>
    runLoad({
      base: server.url,
      method: "GET",
      paths: keys.map((k) => `/item/${k}`),
      headers: server.headers,
      connections: 50,
      seconds: SECONDS,
    });

  // 1. Creates with a trivial beforeCreate vs none, and GET by key with hooks on other schemas vs no code.
  const createRatios: number[] = [];
  const bareRatios: number[] = [];
  const bareCreates: number[] = [];
  const getRatios: number[] = [];
  const rows: (string | number)[][] = [];
  for (let r = 0; r < ROUNDS; r++) {
    await server.admin("DELETE", "/code").catch(() => null);
    const getNone = await gets();
    const bare = await creates("plain");
    bareCreates.push(bare.rps);
    await server.putCode(CODE);
    await Bun.sleep(300);
    const getHooks = await gets();
    const plain = await creates("plain");
    const hooked = await creates("hooked");
    createRatios.push(hooked.rps / plain.rps);
    bareRatios.push(hooked.rps / bare.rps);
    getRatios.push(getHooks.rps / getNone.rps);
    rows.push([
      r + 1,
      Math.round(bare.rps),
      Math.round(plain.rps),
      Math.round(hooked.rps),
      `${hooked.p99} ms`,
      Math.round(getNone.rps),
      Math.round(getHooks.rps),
    ]);
    console.error(
      `round ${r + 1}: creates ${Math.round(plain.rps)} / hooked ${Math.round(hooked.rps)}; GET ${Math.round(getNone.rps)} / ${Math.round(getHooks.rps)}`,
    );
  }

  // 2. Creates at full speed whose afterCreate writes an audit object: the queue's backlog every 5 s.
  const samples: { at: number; queued: number; oldestMs: number }[] = [];
  const started = performance.now();
  const sampler = setInterval(async () => {
    const h = (await server.admin("GET", "/hooks?env=development")) as { queue: { queued: number; oldestMs: number } };
    samples.push({ at: Math.round((performance.now() - started) / 1000), ...h.queue });
  }, 5000);
  const audited = await runLoad({
    base: server.url,
    method: "POST",
    paths: ["/audited"],
    headers: server.headers,
    body,
    connections: 50,
    seconds: QUEUE_SECONDS,
  });
  clearInterval(sampler);
  const stopped = performance.now();
  let drainedMs = -1;
  for (let i = 0; i < 600; i++) {
    const h = (await server.admin("GET", "/hooks?env=development")) as { queue: { queued: number; dead: number } };
    if (h.queue.queued === 0) {
      drainedMs = performance.now() - stopped;
      break;
    }
    await Bun.sleep(100);
  }
  const count = async (schema: string) => {
    const r = await fetch(`${server.url}/${schema}`, { headers: { ...server.headers, range: "objects=0-0" } });
    await r.text();
    return Number((r.headers.get("content-range") ?? "/0").split("/")[1]);
  };
  const [madeAudited, madeAudits] = [await count("audited"), await count("audit")];
  const half = samples.filter((s) => s.at <= QUEUE_SECONDS / 2);
  const late = samples.filter((s) => s.at > QUEUE_SECONDS / 2);
  const maxOf = (xs: typeof samples) => Math.max(0, ...xs.map((s) => s.queued));

  const md = [
    "## Hooks (scripts/bench/hooks.ts)",
    "",
    `${machine()}; built binary, loopback; autocannon/wrk c=50, ${SECONDS} s per run, ${ROUNDS} interleaved rounds; the queue run ${QUEUE_SECONDS} s.`,
    "",
    table(
      ["measure", "result", "target"],
      [
        [
          "creates/s with a trivial beforeCreate / without hooks",
          `${(median(createRatios) * 100).toFixed(1)}% (${createRatios.map((x) => Math.round(x * 100)).join(" / ")})`,
          "≥ 60%",
        ],
        [
          "creates/s with a trivial beforeCreate / the same server with no code at all",
          `${(median(bareRatios) * 100).toFixed(1)}% (${bareRatios.map((x) => Math.round(x * 100)).join(" / ")})`,
          "≥ 60%",
        ],
        [
          "GET by key on a schema without hooks, other schemas with hooks / no code",
          `${(median(getRatios) * 100).toFixed(1)}% (${getRatios.map((x) => Math.round(x * 100)).join(" / ")})`,
          "≥ 97%",
        ],
        [
          `creates at full speed, afterCreate writing an audit object (${QUEUE_SECONDS} s)`,
          `${Math.round(audited.rps)} creates/s (${((audited.rps / median(bareCreates)) * 100).toFixed(0)}% of creates with no code: each create is two writes now); backlog max ${maxOf(half)} in the first half, ${maxOf(late)} in the second; drained ${drainedMs < 0 ? "not within 60 s" : `${Math.round(drainedMs)} ms`} after the load`,
          "no growing backlog",
        ],
        ["objects created / audit objects written by the after-hooks", `${madeAudited} / ${madeAudits}`, "equal"],
      ],
    ),
    "",
    table(
      [
        "round",
        "creates/s, no code",
        "creates/s, no hooks on the schema",
        "creates/s, beforeCreate",
        "p99 with hook",
        "GET/s, no code",
        "GET/s, hooks elsewhere",
      ],
      rows,
    ),
    "",
    '"No hooks on the schema": the environment\'s code has after-hooks on another schema, so each write carries its',
    "context (who, how, from where) into its transaction for the after-hook triggers.",
    "",
    `Backlog samples (s: queued changes, oldest age): ${samples.map((s) => `${s.at}: ${s.queued} (${s.oldestMs} ms)`).join("; ")}.`,
  ].join("\n");
  console.log(md);
  if (values.write) writeSection("hooks", md);
} finally {
  await server.stop();
}
