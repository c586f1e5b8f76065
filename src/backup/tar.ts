// The backup file's container: a POSIX tar (pax) archive that `tar -tf` and `tar -xf` read, written and read here
// with synchronous file I/O (the backup runs on a worker thread, restore in the CLI). Regular files only; names and
// sizes that do not fit the ustar header go into a pax extended header. Every member's SHA-256 is computed while it
// is written or read, so one pass over the data gives both the archive and its checksums.

import { closeSync, fdatasyncSync, fstatSync, openSync, readSync, writeSync } from "node:fs";
import { createHash } from "node:crypto";

const BLOCK = 512;
const CHUNK = 1024 * 1024;
/** The largest size the 11 octal digits of a ustar header hold. */
const USTAR_MAX_SIZE = 8 ** 11 - 1;
/** A pax header is small (path and size); anything bigger is not one of ours. */
const PAX_MAX = 64 * 1024;

export class TarError extends Error {}

/** Writes members one after another to an open file descriptor; `flushEvery` bytes, the data is flushed to disk. */
export class TarWriter {
  #pos = 0;
  #flushed = 0;
  constructor(
    private readonly fd: number,
    private readonly flushEvery = Infinity,
  ) {}

  /** Bytes written so far. */
  get position(): number {
    return this.#pos;
  }

  #write(buf: Uint8Array): void {
    let off = 0;
    while (off < buf.length) off += writeSync(this.fd, buf, off, buf.length - off);
    this.#pos += buf.length;
    if (this.#pos - this.#flushed >= this.flushEvery) {
      fdatasyncSync(this.fd);
      this.#flushed = this.#pos;
    }
  }

  #header(name: string, size: number, mtimeSec: number, type: "0" | "x"): void {
    const h = Buffer.alloc(BLOCK);
    h.write(name.slice(0, 99), 0, "ascii");
    h.write("0000644\0", 100, "ascii");
    h.write("0000000\0", 108, "ascii");
    h.write("0000000\0", 116, "ascii");
    h.write(`${size.toString(8).padStart(11, "0")}\0`, 124, "ascii");
    h.write(`${Math.max(0, Math.floor(mtimeSec)).toString(8).padStart(11, "0")}\0`, 136, "ascii");
    h.write("        ", 148, "ascii");
    h.write(type, 156, "ascii");
    h.write("ustar\0" + "00", 257, "ascii");
    let sum = 0;
    for (const b of h) sum += b;
    h.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148, "ascii");
    this.#write(h);
  }

  #pad(size: number): void {
    const rest = size % BLOCK;
    if (rest) this.#write(new Uint8Array(BLOCK - rest));
  }

  /** Starts a member; a pax header comes first when the name is not short ASCII or the size is too big. */
  #begin(name: string, size: number, mtimeMs: number): void {
    const plain = /^[\x20-\x7e]{1,99}$/.test(name) && size <= USTAR_MAX_SIZE;
    if (!plain) {
      const body = Buffer.from(paxRecord("path", name) + (size > USTAR_MAX_SIZE ? paxRecord("size", String(size)) : ""), "utf8");
      this.#header("PaxHeader", body.length, mtimeMs / 1000, "x");
      this.#write(body);
      this.#pad(body.length);
    }
    this.#header(plain ? name : asciiFallback(name), Math.min(size, USTAR_MAX_SIZE), mtimeMs / 1000, "0");
  }

  /** A member from bytes in memory; returns its SHA-256 (hex). */
  addBytes(name: string, bytes: Uint8Array, mtimeMs = Date.now()): string {
    this.#begin(name, bytes.length, mtimeMs);
    this.#write(bytes);
    this.#pad(bytes.length);
    return createHash("sha256").update(bytes).digest("hex");
  }

  /**
   * A member copied from a file: its first `length` bytes (default: its size at open). A file that shrinks while it
   * is read is padded with zeros (a live database file: pages past its snapshot's end are not part of it).
   * `progress` gets the bytes copied. Returns size and SHA-256.
   */
  addFile(name: string, path: string, opts: { length?: number; progress?: (n: number) => void } = {}): { size: number; sha256: string } {
    const src = openSync(path, "r");
    try {
      const st = fstatSync(src);
      const size = opts.length ?? st.size;
      this.#begin(name, size, st.mtimeMs);
      const hash = createHash("sha256");
      const buf = Buffer.allocUnsafe(CHUNK);
      let done = 0;
      while (done < size) {
        const want = Math.min(CHUNK, size - done);
        let n = readSync(src, buf, 0, want, done);
        if (n === 0) {
          buf.fill(0, 0, want);
          n = want;
        }
        const chunk = buf.subarray(0, n);
        hash.update(chunk);
        this.#write(chunk);
        done += n;
        opts.progress?.(n);
      }
      this.#pad(size);
      return { size, sha256: hash.digest("hex") };
    } finally {
      closeSync(src);
    }
  }

  /** The two zero blocks that end an archive. */
  finish(): void {
    this.#write(new Uint8Array(BLOCK * 2));
  }
}

/** "<len> key=value\n", where len counts the whole record including its own digits. */
export function paxRecord(key: string, value: string): string {
  const rest = ` ${key}=${value}\n`;
  const bytes = Buffer.byteLength(rest);
  let len = bytes + String(bytes).length;
  if (String(len).length !== String(bytes).length) len = bytes + String(len).length;
  return `${len}${rest}`;
}

function asciiFallback(name: string): string {
  return name.replace(/[^\x20-\x7e]/g, "_").slice(-99);
}

function parsePax(body: Buffer): Record<string, string> {
  const out: Record<string, string> = {};
  let i = 0;
  while (i < body.length) {
    const space = body.indexOf(0x20, i);
    const len = Number(body.toString("ascii", i, space));
    if (space < 0 || !Number.isSafeInteger(len) || len <= 0 || i + len > body.length) throw new TarError("a damaged pax header");
    const rec = body.toString("utf8", space + 1, i + len - 1);
    const eq = rec.indexOf("=");
    if (eq > 0) out[rec.slice(0, eq)] = rec.slice(eq + 1);
    i += len;
  }
  return out;
}

function octal(h: Buffer, off: number, len: number): number {
  const s = h
    .toString("ascii", off, off + len)
    .replace(/\0.*$/s, "")
    .trim();
  if (!/^[0-7]*$/.test(s)) throw new TarError("a damaged tar header");
  return s === "" ? 0 : parseInt(s, 8);
}

function checksumOk(h: Buffer): boolean {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : h[i]!;
  return sum === octal(h, 148, 8);
}

export interface TarMember {
  name: string;
  size: number;
}

/**
 * Reads an archive's regular files in order. For each, `open(member)` returns a sink for its bytes (or null to skip
 * it); the member's SHA-256 is returned in the list. Anything but regular files, directories and pax headers, a bad
 * header checksum, or a truncated archive is a TarError. `progress` gets archive bytes read.
 */
export function readTar(
  path: string,
  open: (m: TarMember) => { write(chunk: Uint8Array): void; close(): void } | null,
  opts: { maxMembers?: number; progress?: (n: number) => void } = {},
): { name: string; size: number; sha256: string }[] {
  const fd = openSync(path, "r");
  const out: { name: string; size: number; sha256: string }[] = [];
  const header = Buffer.alloc(BLOCK);
  const buf = Buffer.allocUnsafe(CHUNK);
  let pos = 0;
  const readExact = (target: Buffer, len: number) => {
    let got = 0;
    while (got < len) {
      const n = readSync(fd, target, got, len - got, pos);
      if (n === 0) throw new TarError("the archive ends in the middle of a member (truncated)");
      got += n;
      pos += n;
    }
    opts.progress?.(len);
  };
  try {
    let pax: Record<string, string> = {};
    for (;;) {
      if (out.length > (opts.maxMembers ?? 10_000_000)) throw new TarError("too many members");
      readExact(header, BLOCK);
      if (header.every((b) => b === 0)) return out;
      if (!checksumOk(header)) throw new TarError(`a damaged tar header at byte ${pos - BLOCK}`);
      const type = String.fromCharCode(header[156]!);
      let size = octal(header, 124, 12);
      const padded = Math.ceil(size / BLOCK) * BLOCK;
      if (type === "x") {
        if (size > PAX_MAX) throw new TarError("a pax header is too large");
        const body = Buffer.alloc(padded);
        readExact(body, padded);
        pax = parsePax(body.subarray(0, size));
        continue;
      }
      const prefix = header.toString("utf8", 345, 500).replace(/\0.*$/s, "");
      const short = header.toString("utf8", 0, 100).replace(/\0.*$/s, "");
      const name = pax.path ?? (prefix ? `${prefix}/${short}` : short);
      if (pax.size !== undefined) size = Number(pax.size);
      pax = {};
      if (type === "5") continue;
      if (type !== "0" && type !== "\0") throw new TarError(`member ${JSON.stringify(name)} is not a regular file`);
      const sink = open({ name, size });
      const hash = createHash("sha256");
      let left = size;
      while (left > 0) {
        const n = Math.min(CHUNK, left);
        readExact(buf, n);
        const chunk = buf.subarray(0, n);
        hash.update(chunk);
        sink?.write(chunk);
        left -= n;
      }
      sink?.close();
      const pad = (BLOCK - (size % BLOCK)) % BLOCK;
      if (pad) readExact(Buffer.alloc(pad), pad);
      out.push({ name, size, sha256: hash.digest("hex") });
    }
  } finally {
    closeSync(fd);
  }
}
