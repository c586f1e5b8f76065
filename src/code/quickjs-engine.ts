// The QuickJS engine (quickjs-emscripten, sync release build): the wasm is imported as a file so
// `bun build --compile` embeds it, compiled once into a WebAssembly.Module, and every sandbox gets a module
// instance of its own (its own linear memory, about 4 ms), so throwing a sandbox away gives its memory back -
// WebAssembly memory never shrinks, and a wasm abort in one instance cannot poison another.

import wasmPath from "@jitl/quickjs-wasmfile-release-sync/wasm" with { type: "file" };
import RELEASE_SYNC from "@jitl/quickjs-wasmfile-release-sync";
import { type QuickJSWASMModule, newQuickJSWASMModuleFromVariant, newVariant } from "quickjs-emscripten-core";

let compiled: Promise<WebAssembly.Module> | null = null;

/** The compiled wasm (once per process). */
function wasmModule(): Promise<WebAssembly.Module> {
  compiled ??= Bun.file(wasmPath)
    .arrayBuffer()
    .then((bytes) => WebAssembly.compile(bytes));
  return compiled;
}

const PAGE = 64 * 1024;
/** Linear memory the engine needs besides the guest's heap (the QuickJS runtime, its stack, the bundle). */
export const ENGINE_OVERHEAD_BYTES = 16 * 1024 * 1024;
/** Linear memory a fresh instance starts with (16 MB; pages are only resident once touched). */
export const INITIAL_PAGES = 256;
export const INITIAL_BYTES = INITIAL_PAGES * PAGE;

/**
 * A fresh QuickJS module instance with its own memory, which cannot grow past `maxBytes`: QuickJS's own limit
 * does not count every allocation (typed array storage escapes it), the memory's maximum does.
 */
export async function newEngine(maxBytes: number): Promise<{ engine: QuickJSWASMModule; memory: WebAssembly.Memory }> {
  const module = await wasmModule();
  const maximum = Math.ceil((maxBytes + ENGINE_OVERHEAD_BYTES) / PAGE);
  const memory = new WebAssembly.Memory({ initial: Math.min(maximum, INITIAL_PAGES), maximum });
  return { engine: await newQuickJSWASMModuleFromVariant(newVariant(RELEASE_SYNC, { wasmModule: module, wasmMemory: memory })), memory };
}
