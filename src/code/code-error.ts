// Failures of guest code: the kind of limit or error (compile, timeout, memory, stack, thrown, result), how a
// QuickJS error the guest raised is classified into one, and the line of a compile error.

export type CodeErrorKind = "compile" | "timeout" | "memory" | "stack" | "thrown" | "result" | "rejected";

/**
 * A failure of guest code, with what kind of limit or error it was and (compile errors) the line; a hook's
 * refusal (`reject(status, message)`) is kind "rejected" with its status.
 */
export class CodeError extends Error {
  constructor(
    readonly kind: CodeErrorKind,
    message: string,
    readonly line?: number,
    readonly status?: number,
  ) {
    super(message);
  }
}

export interface GuestError {
  name?: string;
  message?: string;
  stack?: string;
  lineNumber?: number;
  /** Set only on a refusal made by the sandbox's `reject`. */
  status?: number;
}

/** The kind and message of an error the guest raised (interruption and out-of-memory are QuickJS InternalErrors). */
export function classify(e: GuestError | string | undefined, timeoutMs: number): CodeError {
  const name = typeof e === "object" ? e?.name : undefined;
  const message = typeof e === "object" ? String(e?.message ?? "") : String(e);
  if (typeof e === "object" && typeof e?.status === "number" && e.name === "Rejection")
    return new CodeError("rejected", message.slice(0, 1000), undefined, e.status);
  if (name === "InternalError" && message === "interrupted") return new CodeError("timeout", `the method ran longer than ${timeoutMs} ms`);
  if (/out of memory/i.test(message)) return new CodeError("memory", "the method ran out of memory");
  if (name === "RangeError" && /stack overflow|call stack/i.test(message))
    return new CodeError("stack", "the method's call stack overflowed (too deep recursion)");
  if (name === "InternalError" && /stack overflow/i.test(message))
    return new CodeError("stack", "the method's call stack overflowed (too deep recursion)");
  return new CodeError("thrown", `${name && name !== "Error" ? `${name}: ` : ""}${message}`.slice(0, 1000));
}

/** The line of a compile error, from QuickJS's message or stack ("bundle.js:12"). */
export function lineOf(e: GuestError): number | undefined {
  if (typeof e.lineNumber === "number") return e.lineNumber;
  const m = /bundle\.js:(\d+)/.exec(`${e.stack ?? ""} ${e.message ?? ""}`);
  return m ? Number(m[1]) : undefined;
}
