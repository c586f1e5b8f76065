// The FIFO gate that serializes every write of a BunSqliteClient on its writer connection, so a synchronous
// busy_timeout wait never blocks the JS thread while one of our own transactions holds the lock.

/** FIFO async mutex; release() hands the gate straight to the next waiter, so nobody can cut in. */
export class WriteGate {
  busy = false;
  #queue: { resolve: () => void; reject: (e: Error) => void }[] = [];

  acquire(): Promise<void> {
    if (this.busy) return new Promise((resolve, reject) => this.#queue.push({ resolve, reject }));
    this.busy = true;
    return Promise.resolve();
  }

  release(): void {
    const next = this.#queue.shift();
    if (next) next.resolve();
    else this.busy = false;
  }

  abort(error: Error): void {
    for (const waiter of this.#queue.splice(0)) waiter.reject(error);
  }
}
