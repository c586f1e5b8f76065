// Messages between the main thread and a custom code thread, batched and sent as one string: everything posted
// during one turn of the event loop goes in one postMessage (flushed by setImmediate, after the turn's I/O), so
// under load the fixed cost of a cross-thread message - the wake-up and the structured clone, which is several
// times cheaper for one string than for objects - is paid once per batch, not once per call.
// A message's `payload` (a request's JSON, a method's body, a service's JSON answer) travels outside the JSON:
// the batch is the messages' JSON with each payload replaced by its length, a newline (JSON.stringify never
// writes a raw one), then the payloads one after another - so they are neither escaped nor unescaped.

/** A message; its `payload`, when it has one, is carried as is. */
type Framed = { payload?: string };

export function batchedPoster<T extends object>(send: (batch: string) => void): (m: T) => void {
  let queue: T[] = [];
  const flush = () => {
    const batch = queue;
    queue = [];
    send(frame(batch));
  };
  return (m: T) => {
    if (queue.length === 0) setImmediate(flush);
    queue.push(m);
  };
}

/** The batch as one string (pure). */
export function frame(messages: readonly object[]): string {
  let payloads = "";
  const heads = messages.map((m) => {
    const payload = (m as Framed).payload;
    if (payload === undefined) return m;
    payloads += payload;
    return { ...m, payload: payload.length };
  });
  return `${JSON.stringify(heads)}\n${payloads}`;
}

/** The messages of one batch, payloads back in place (pure). */
export function unbatch<T extends object>(data: string): T[] {
  const nl = data.indexOf("\n");
  const messages = JSON.parse(nl < 0 ? data : data.slice(0, nl)) as (T & { payload?: string | number })[];
  let at = nl + 1;
  for (const m of messages)
    if (typeof m.payload === "number") {
      const end = at + m.payload;
      m.payload = data.slice(at, end);
      at = end;
    }
  return messages as T[];
}
