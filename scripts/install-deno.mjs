#!/usr/bin/env node
// Installs Deno (the official build, published on npm as @deno/<platform>) into .cache/deno/deno for the client
// library's end-to-end test, which runs the served module in Deno as in Bun, Node and Chromium. Idempotent; kept out
// of the dependencies so `npm ci` does not fetch ~40 MB that only this test uses. Prints the executable's path.
import { installNpmBinary } from "./npm-binary.mjs";

const VERSION = "2.9.6";
const platform = {
  "linux-x64": "linux-x64-glibc",
  "linux-arm64": "linux-arm64-glibc",
  "darwin-x64": "darwin-x64",
  "darwin-arm64": "darwin-arm64",
}[`${process.platform}-${process.arch}`];
if (!platform) {
  console.error(`install-deno: no Deno build for ${process.platform}-${process.arch}`);
  process.exit(1);
}
console.log(installNpmBinary(`@deno/${platform}@${VERSION}`, "deno"));
