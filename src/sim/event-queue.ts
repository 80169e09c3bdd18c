// The data plane's queue of future events: a binary min-heap by time, events of the same time in
// the order they were pushed (a change the API took first takes effect first).

interface Queued<E> {
  at: number;
  seq: number;
  event: E;
}

/** A binary min-heap of events by time, then by order of insertion. */
export class EventQueue<E> {
  private readonly heap: Queued<E>[] = [];
  private seq = 0;

  push(at: number, event: E): void {
    const heap = this.heap;
    heap.push({ at, seq: this.seq++, event });
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  peek(): Queued<E> | undefined {
    return this.heap[0];
  }

  pop(): Queued<E> | undefined {
    const heap = this.heap;
    const top = heap[0];
    const last = heap.pop();
    if (heap.length === 0 || last === undefined) return top;
    heap[0] = last;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < heap.length && before(heap[left]!, heap[smallest]!)) smallest = left;
      if (right < heap.length && before(heap[right]!, heap[smallest]!)) smallest = right;
      if (smallest === i) break;
      [heap[i], heap[smallest]] = [heap[smallest]!, heap[i]!];
      i = smallest;
    }
    return top;
  }
}

function before<E>(a: Queued<E>, b: Queued<E>): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}
