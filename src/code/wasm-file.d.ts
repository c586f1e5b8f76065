// `import x from "<file>" with { type: "file" }` gives the file's path (embedded by `bun build --compile`).
declare module "@jitl/quickjs-wasmfile-release-sync/wasm" {
  const path: string;
  export default path;
}
