// Names JavaScriptCore's JIT-compiled code for `perf report`: a server started with BUN_JSC_useJITDump=1 writes a
// perf jitdump to /tmp/jit-<thread>-<pid>-<suffix>, which `perf inject --jit` does not pick up under that name.
// This turns the dump's code-load records into /tmp/perf-<pid>.map (start, size, name per line), the file perf
// reads for code it cannot otherwise name. Run it while the process is alive or after, before `perf report`.
// Usage: bun run scripts/jit-map.ts <pid>

import { readFileSync, readdirSync, writeFileSync } from "node:fs";

const pid = Number(process.argv[2]);
if (!Number.isInteger(pid) || pid <= 0) throw new Error("give the profiled process's pid");

const JIT_CODE_LOAD = 0;
const lines: string[] = [];
const dumps = readdirSync("/tmp").filter((f) => new RegExp(`^jit-(\\d+-)?${pid}(-|\\.dump$)`).test(f));
for (const file of dumps) {
  const data = readFileSync(`/tmp/${file}`);
  // File header: magic, version, header size (u32 each), then the rest of the header.
  let at = data.readUInt32LE(8);
  while (at + 16 <= data.length) {
    const id = data.readUInt32LE(at);
    const size = data.readUInt32LE(at + 4);
    if (size === 0 || at + size > data.length) break;
    if (id === JIT_CODE_LOAD) {
      // Record header (16 bytes), then pid, tid (u32), vma, code address, code size, code index (u64), name.
      const address = data.readBigUInt64LE(at + 16 + 16);
      const length = data.readBigUInt64LE(at + 16 + 24);
      const nameStart = at + 16 + 40;
      const nameEnd = data.indexOf(0, nameStart);
      const name = data.toString("utf8", nameStart, nameEnd).replace(/\s+/g, " ");
      lines.push(`${address.toString(16)} ${length.toString(16)} ${name}`);
    }
    at += size;
  }
}
writeFileSync(`/tmp/perf-${pid}.map`, `${lines.join("\n")}\n`);
console.log(`${lines.length} symbols from ${dumps.length} dump(s) -> /tmp/perf-${pid}.map`);
