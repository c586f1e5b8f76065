// The sandbox's hot path into QuickJS on quickjs-emscripten's own FFI (the QTS_* functions its QuickJSContext
// wraps): a string in and out, a call, the pending jobs, and host functions answered without the library's
// per-call scope, generator and handle objects (about 1 us each of a call's 3-4 crossings). Loading, errors and
// promises the host settles later keep the library's API. The library internals this reaches - the module's
// FFI, emscripten module and callback table, the runtime's host function table, the runtime and context
// pointers - are checked when a sandbox is made, so a library that moved them fails at load, never mid-call.
// Values are JSValue pointers (numbers): a pointer this answers is owned and freed with `free`.

import type { QuickJSContext, QuickJSHandle, QuickJSRuntime, QuickJSWASMModule } from "quickjs-emscripten-core";

/** A host function answered on the FFI: its arguments as borrowed JSValue pointers; it answers an owned pointer or 0 (undefined). */
export type RawHostFunction = (bridge: QuickJSBridge, argc: number, argv: number) => number;

interface Ffi {
  QTS_NewString(ctx: number, str: number): number;
  QTS_GetString(ctx: number, value: number): number;
  QTS_FreeCString(ctx: number, str: number): void;
  QTS_GetFloat64(ctx: number, value: number): number;
  QTS_FreeValuePointer(ctx: number, value: number): void;
  QTS_FreeValuePointerRuntime(rt: number, value: number): void;
  QTS_DupValuePointer(ctx: number, value: number): number;
  QTS_ArgvGetJSValueConstPointer(argv: number, index: number): number;
  QTS_Call(ctx: number, fn: number, thisObj: number, argc: number, argv: number): number;
  QTS_ResolveException(ctx: number, value: number): number;
  QTS_ExecutePendingJob(rt: number, max: number, lastCtx: number): number;
  QTS_IsJobPending(rt: number): number;
  QTS_Typeof(ctx: number, value: number): number;
  QTS_GetUndefined(): number;
  QTS_Throw(ctx: number, error: number): number;
}

interface EmModule {
  /** The instance's memory as bytes (replaced when the memory grows). */
  HEAPU8: Uint8Array;
  _malloc(size: number): number;
  _free(ptr: number): void;
  callbacks: { callFunction: (asyncify: unknown, ctx: number, thisPtr: number, argc: number, argv: number, id: number) => number };
}

/** Bytes kept for strings going in (longer ones are allocated for the occasion). */
const SCRATCH = 64 * 1024;
const encoder = new TextEncoder();
const BRIDGED = Symbol("burrow.bridged");
const decoder = new TextDecoder();

function internal<T>(owner: object, key: string, check: (v: unknown) => boolean): T {
  const v = (owner as Record<string, unknown>)[key];
  if (!check(v)) throw new Error(`quickjs-emscripten changed: ${owner.constructor?.name}.${key} is not what the sandbox bridge expects`);
  return v as T;
}
const isObject = (v: unknown) => typeof v === "object" && v !== null;
const pointerOf = (v: unknown) => isObject(v) && typeof (v as { value: unknown }).value === "number";

export class QuickJSBridge {
  readonly ctxPtr: number;
  readonly rtPtr: number;
  readonly undefinedPtr: number;
  private readonly ffi: Ffi;
  private readonly em: EmModule;
  private readonly hostRefs: { get(id: number): unknown };
  /** Host functions answered here, by the library's function and then by its host reference id. */
  private readonly raw = new Map<unknown, RawHostFunction>();
  private readonly rawById = new Map<number, RawHostFunction>();
  /** Scratch memory inside the instance: strings going in, a call's argument pointers, the job context out-pointer. */
  private readonly scratch: number;
  private readonly argv: number;
  private readonly jobCtx: number;
  private words: Int32Array<ArrayBufferLike> = new Int32Array(0);

  constructor(
    engine: QuickJSWASMModule,
    rt: QuickJSRuntime,
    private readonly ctx: QuickJSContext,
  ) {
    this.em = internal<EmModule>(
      engine,
      "module",
      (m) =>
        isObject(m) &&
        typeof (m as EmModule)._malloc === "function" &&
        (m as EmModule).HEAPU8 instanceof Uint8Array &&
        isObject((m as EmModule).callbacks),
    );
    this.ffi = internal<Ffi>(engine, "ffi", (f) => isObject(f) && typeof (f as Ffi).QTS_ExecutePendingJob === "function");
    this.hostRefs = internal(rt, "hostRefs", (h) => isObject(h) && typeof (h as { get: unknown }).get === "function");
    this.rtPtr = internal<{ value: number }>(rt, "rt", pointerOf).value;
    this.ctxPtr = internal<{ value: number }>(ctx, "ctx", pointerOf).value;
    this.undefinedPtr = this.ffi.QTS_GetUndefined();
    this.scratch = this.em._malloc(SCRATCH + 32);
    if (this.scratch === 0) throw new Error("no memory for the sandbox bridge");
    this.argv = this.scratch + SCRATCH;
    this.jobCtx = this.argv + 16;
    const callbacks = this.em.callbacks;
    // A module instance serves one runtime and context (quickjs-engine.ts): every host call of it passes here.
    if (BRIDGED in callbacks) throw new Error("this QuickJS module instance already has a bridge (one sandbox per instance)");
    Object.defineProperty(callbacks, BRIDGED, { value: true });
    const library = callbacks.callFunction;
    callbacks.callFunction = (asyncify, ctxPtr, thisPtr, argc, argv, id) => {
      let fn = this.rawById.get(id);
      if (!fn) {
        fn = this.raw.get(this.hostRefs.get(id));
        if (!fn) return library(asyncify, ctxPtr, thisPtr, argc, argv, id);
        this.rawById.set(id, fn);
      }
      // An exception must not unwind through the WebAssembly frames: it becomes the guest's (as the library does).
      try {
        return fn(this, argc, argv);
      } catch (e) {
        const error = ctx.newError(String((e as Error)?.message ?? e));
        const thrown = this.ffi.QTS_Throw(this.ctxPtr, error.value);
        error.dispose();
        return thrown;
      }
    };
  }

  /** A host function the guest calls through this bridge (not the library's handles); the handle is the library's. */
  newFunction(name: string, fn: RawHostFunction): QuickJSHandle {
    const marker = () => undefined;
    this.raw.set(marker, fn);
    return this.ctx.newFunction(name, marker);
  }

  /** The borrowed argument `i` of a host call (undefined past the arguments given). */
  arg(argc: number, argv: number, i: number): number {
    return i < argc ? this.ffi.QTS_ArgvGetJSValueConstPointer(argv, i) : this.undefinedPtr;
  }

  getNumber(value: number): number {
    return this.ffi.QTS_GetFloat64(this.ctxPtr, value);
  }

  /** A QuickJS value as a string (QuickJS's ToString; a string with a NUL ends there, as in the library). */
  getString(value: number): string {
    const c = this.ffi.QTS_GetString(this.ctxPtr, value);
    const heap = this.em.HEAPU8;
    const end = heap.indexOf(0, c);
    const s = decoder.decode(heap.subarray(c, end));
    this.ffi.QTS_FreeCString(this.ctxPtr, c);
    return s;
  }

  /** A new QuickJS string (owned). `s` must hold no NUL character (JSON text and names never do). */
  newString(s: string): number {
    const ffi = this.ffi;
    if (s.length <= SCRATCH / 3) {
      const { written } = encoder.encodeInto(s, this.em.HEAPU8.subarray(this.scratch, this.scratch + SCRATCH));
      this.em.HEAPU8[this.scratch + written] = 0;
      return ffi.QTS_NewString(this.ctxPtr, this.scratch);
    }
    const bytes = encoder.encode(s);
    const p = this.em._malloc(bytes.length + 1);
    if (p === 0) throw new Error(`a string of ${bytes.length} bytes does not fit in the sandbox's memory`);
    this.em.HEAPU8.set(bytes, p);
    this.em.HEAPU8[p + bytes.length] = 0;
    const v = ffi.QTS_NewString(this.ctxPtr, p);
    this.em._free(p);
    return v;
  }

  /** The library's handle for an owned value (for the library's API: dump, errors). */
  handle(value: number): QuickJSHandle {
    return this.ctx.getMemory(this.rtPtr as never).heapValueHandle(value as never);
  }

  /** An owned value for a library handle, which is disposed (what a host function answers). */
  own(handle: QuickJSHandle): number {
    const p = this.dup(handle.value);
    handle.dispose();
    return p;
  }

  /** A new reference to a value (owned). */
  dup(value: number): number {
    return this.ffi.QTS_DupValuePointer(this.ctxPtr, value);
  }

  free(value: number): void {
    this.ffi.QTS_FreeValuePointer(this.ctxPtr, value);
  }

  /** The memory as 32-bit words (a new view after the memory grew). */
  private heap32(): Int32Array<ArrayBufferLike> {
    const buffer = this.em.HEAPU8.buffer;
    if (this.words.buffer !== buffer) this.words = new Int32Array(buffer);
    return this.words;
  }

  /** Call `fn` with two arguments and `this` undefined: the result (owned), or the exception (owned) as `error`. */
  call2(fn: number, a: number, b: number): { value: number; error: 0 } | { value: 0; error: number } {
    const heap = this.heap32();
    heap[this.argv >> 2] = a;
    heap[(this.argv >> 2) + 1] = b;
    const result = this.ffi.QTS_Call(this.ctxPtr, fn, this.undefinedPtr, 2, this.argv);
    const error = this.ffi.QTS_ResolveException(this.ctxPtr, result);
    if (error === 0) return { value: result, error: 0 };
    this.free(result);
    return { value: 0, error };
  }

  /**
   * Run the guest's pending promise jobs until none is left: 0 when they ran, or the exception a job raised
   * (owned). Nothing pending costs one check.
   */
  executePendingJobs(): number {
    const ffi = this.ffi;
    if (!ffi.QTS_IsJobPending(this.rtPtr)) return 0;
    this.heap32()[this.jobCtx >> 2] = 0;
    const out = ffi.QTS_ExecutePendingJob(this.rtPtr, -1, this.jobCtx);
    const jobCtx = this.heap32()[this.jobCtx >> 2]!;
    if (jobCtx === 0) {
      ffi.QTS_FreeValuePointerRuntime(this.rtPtr, out);
      return 0;
    }
    // The count of jobs run is a number; anything else is the exception (as the library tells them apart).
    const t = ffi.QTS_Typeof(jobCtx, out);
    const isNumber = this.em.HEAPU8[t] === 110 && this.em.HEAPU8[t + 1] === 117; // "nu"mber
    this.em._free(t);
    if (!isNumber) return out;
    ffi.QTS_FreeValuePointer(jobCtx, out);
    return 0;
  }

  /** Give back the scratch memory (the instance itself goes with the sandbox). */
  dispose(): void {
    this.em._free(this.scratch);
  }
}
