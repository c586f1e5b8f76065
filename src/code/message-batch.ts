// Messages between the main thread and a custom code thread, batched and sent as one JSON string: everything
// posted during one turn of the event loop goes in one postMessage (flushed by setImmediate, after the turn's
// I/O), so under load the fixed cost of a cross-thread message - the wake-up and the structured clone, which
// is several times cheaper for one string than for objects - is paid once per batch, not once per call.

export function batchedPoster<T>(send: (batch: string) => void): (m: T) => void {
  let queue: T[] = [];
  const flush = () => {
    const batch = queue;
    queue = [];
    send(JSON.stringify(batch));
  };
  return (m: T) => {
    if (queue.length === 0) setImmediate(flush);
    queue.push(m);
  };
}

/** The messages of one batch. */
export function unbatch<T>(data: string): T[] {
  return JSON.parse(data) as T[];
}
