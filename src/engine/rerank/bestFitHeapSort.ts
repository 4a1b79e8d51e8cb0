// BestFit heap sort (CodeRAG section 2.3.1, Fig. 6): the candidates form an m-ary heap (5 children,
// as the published implementation) whose comparison is one reranker call over a window — a parent
// and its children, at most 6 candidates — that returns the window's most helpful candidate, which
// is swapped up. Only the top-u are extracted, so a rerank costs O(n/m + u log_m n) calls.
import { throwIfAborted } from '../util/errors';

export const DEFAULT_ARITY = 5;
/** CodeRAG keeps the top u=10 after reranking. */
export const DEFAULT_TOP_U = 10;

/** Picks the best of a window shown in retrieval order; returns its index in the window. */
type WindowComparator<T> = (window: readonly T[], signal: AbortSignal) => Promise<number>;

interface HeapSortOptions {
  /** Children per heap node (window size = arity + 1). */
  arity?: number;
  topU?: number;
}

interface HeapSortResult<T> {
  /** The top-u, best first. */
  top: T[];
  /** The others, in retrieval order. */
  rest: T[];
  /** Comparator calls made. */
  calls: number;
}

interface Entry<T> {
  value: T;
  /** Position in the retrieval list. */
  rank: number;
}

export async function bestFitHeapSort<T>(
  items: readonly T[],
  compare: WindowComparator<T>,
  options: HeapSortOptions = {},
  signal: AbortSignal,
): Promise<HeapSortResult<T>> {
  const arity = Math.max(1, Math.floor(options.arity ?? DEFAULT_ARITY));
  const topU = Math.max(0, Math.floor(options.topU ?? DEFAULT_TOP_U));
  const heap: Array<Entry<T>> = items.map((value, rank) => ({ value, rank }));
  let size = heap.length;
  let calls = 0;

  const at = (i: number): Entry<T> => heap[i]!;
  const siftDown = async (start: number): Promise<void> => {
    let i = start;
    for (;;) {
      const first = arity * i + 1;
      if (first >= size) return;
      const nodes = [i];
      for (let c = first; c < Math.min(first + arity, size); c++) nodes.push(c);
      // The window is shown in retrieval order, so a failed call that keeps the first keeps retrieval order.
      nodes.sort((a, b) => at(a).rank - at(b).rank);
      throwIfAborted(signal);
      const picked = await compare(
        nodes.map((n) => at(n).value),
        signal,
      );
      calls++;
      const winner = Number.isInteger(picked) && picked >= 0 && picked < nodes.length ? nodes[picked]! : nodes[0]!;
      if (winner === i) return;
      [heap[i], heap[winner]] = [at(winner), at(i)];
      i = winner;
    }
  };

  for (let i = Math.floor((size - 2) / arity); i >= 0; i--) await siftDown(i);

  const top: T[] = [];
  while (top.length < topU && size > 0) {
    top.push(at(0).value);
    size--;
    heap[0] = at(size);
    heap.length = size;
    if (top.length < topU) await siftDown(0);
  }
  const rest = heap
    .slice(0, size)
    .sort((a, b) => a.rank - b.rank)
    .map((e) => e.value);
  return { top, rest, calls };
}

/** Levels below node i in an m-ary heap of the given size. */
function heightBelow(i: number, size: number, arity: number): number {
  let h = 0;
  let node = i;
  while (arity * node + 1 < size) {
    node = arity * node + 1;
    h++;
  }
  return h;
}

/** Worst-case comparator calls of bestFitHeapSort: every sift-down goes to the bottom. */
export function heapSortCallBound(n: number, topU = DEFAULT_TOP_U, arity = DEFAULT_ARITY): number {
  let bound = 0;
  for (let i = Math.floor((n - 2) / arity); i >= 0; i--) bound += heightBelow(i, n, arity);
  const extractions = Math.min(topU, n);
  for (let k = 1; k < extractions; k++) bound += heightBelow(0, n - k, arity);
  return bound;
}
