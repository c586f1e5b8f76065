// Messages between the main thread and a custom code thread, batched: everything posted during one turn of the
// event loop goes as one postMessage (an array), so under load the fixed cost of a cross-thread message (a
// wake-up and a structured clone) is paid once per batch instead of once per call.

export function batchedPoster<T>(send: (batch: T[]) => void): (m: T) => void {
  let queue: T[] = [];
  const flush = () => {
    const batch = queue;
    queue = [];
    send(batch);
  };
  return (m: T) => {
    if (queue.length === 0) queueMicrotask(flush);
    queue.push(m);
  };
}
