// Reading a text file as batches of lines with their line numbers, in constant memory (one chunk at a time;
// a line is held whole). `\r\n` and `\n` both end lines; a UTF-8 byte order mark is dropped.

export interface LineBatch {
  /** Line number (1-based) of lines[0]. */
  first: number;
  lines: string[];
  /** Bytes of the file read so far (for progress). */
  bytes: number;
}

/** The file's lines in batches (one per chunk read); bounded by the file's size. */
export async function* readLines(path: string): AsyncGenerator<LineBatch> {
  const decoder = new TextDecoder("utf-8", { fatal: false, ignoreBOM: false });
  let rest = "";
  let line = 1;
  let bytes = 0;
  for await (const chunk of Bun.file(path).stream()) {
    bytes += chunk.byteLength;
    const text = rest + decoder.decode(chunk, { stream: true });
    const cut = text.lastIndexOf("\n");
    if (cut < 0) {
      rest = text;
      continue;
    }
    rest = text.slice(cut + 1);
    const lines = text.slice(0, cut).split("\n");
    for (let i = 0; i < lines.length; i++) if (lines[i]!.endsWith("\r")) lines[i] = lines[i]!.slice(0, -1);
    yield { first: line, lines, bytes };
    line += lines.length;
  }
  rest += decoder.decode();
  if (rest.endsWith("\r")) rest = rest.slice(0, -1);
  if (rest !== "") yield { first: line, lines: [rest], bytes };
}

/** The file's text in decoded chunks (CSV parsing), with bytes read so far. */
export async function* readChunks(path: string): AsyncGenerator<{ text: string; bytes: number }> {
  const decoder = new TextDecoder("utf-8", { fatal: false, ignoreBOM: false });
  let bytes = 0;
  for await (const chunk of Bun.file(path).stream()) {
    bytes += chunk.byteLength;
    yield { text: decoder.decode(chunk, { stream: true }), bytes };
  }
  const tail = decoder.decode();
  if (tail) yield { text: tail, bytes };
}
