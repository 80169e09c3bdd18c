/**
 * Maps `items` through `fn` with at most `limit` calls in flight; results keep the input order.
 * The first rejection rejects the whole map (calls already started still finish).
 */
export async function mapConcurrent<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, worker));
  return results;
}

/**
 * A counting semaphore with a FIFO queue: at most `limit` holders at once; a holder may give its
 * slot back while it waits for something slow (a load balancer provisioning) and queue again.
 */
export class Slots {
  private free: number;
  private readonly queue: (() => void)[] = [];

  constructor(limit: number) {
    this.free = Math.max(1, limit);
  }

  async acquire(): Promise<void> {
    if (this.free > 0) {
      this.free -= 1;
      return;
    }
    await new Promise<void>((resolve) => this.queue.push(resolve));
  }

  release(): void {
    const next = this.queue.shift();
    if (next !== undefined) next();
    else this.free += 1;
  }

  /** Runs `fn` holding a slot. */
  async with<T>(fn: () => Promise<T>): Promise<T> {
    await this.acquire();
    try {
      return await fn();
    } finally {
      this.release();
    }
  }

  /** Runs `wait` without the caller's slot, and takes a slot again before returning. */
  async without<T>(wait: () => Promise<T>): Promise<T> {
    this.release();
    try {
      return await wait();
    } finally {
      await this.acquire();
    }
  }
}
