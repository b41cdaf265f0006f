/**
 * The `k` items of highest score offered, kept in a min-heap: offering n items costs O(n log k)
 * and nothing of size n is sorted. Ties keep the item offered first.
 */
export class TopK<T> {
  private readonly scores: number[] = [];
  private readonly items: T[] = [];
  private readonly order: number[] = [];
  private offered = 0;

  constructor(private readonly k: number) {}

  /** The lowest score kept once full (0 before): an offer at or below it is refused. */
  get floor(): number {
    return this.scores.length < this.k ? 0 : (this.scores[0] as number);
  }

  offer(score: number, item: T): void {
    const seq = this.offered++;
    if (this.k <= 0) return;
    if (this.scores.length < this.k) {
      this.scores.push(score);
      this.items.push(item);
      this.order.push(seq);
      this.up(this.scores.length - 1);
      return;
    }
    if (score <= (this.scores[0] as number)) return;
    this.scores[0] = score;
    this.items[0] = item;
    this.order[0] = seq;
    this.down(0);
  }

  /** The items kept, best first. */
  sorted(): T[] {
    const at = this.scores.map((_, i) => i);
    at.sort((x, y) => (this.scores[y] as number) - (this.scores[x] as number) || (this.order[x] as number) - (this.order[y] as number));
    return at.map((i) => this.items[i] as T);
  }

  /** Whether heap slot `x` ranks below slot `y` (a lower score, or the same offered later). */
  private below(x: number, y: number): boolean {
    const sx = this.scores[x] as number;
    const sy = this.scores[y] as number;
    return sx < sy || (sx === sy && (this.order[x] as number) > (this.order[y] as number));
  }

  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.below(i, parent)) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private down(i: number): void {
    const n = this.scores.length;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let least = i;
      if (l < n && this.below(l, least)) least = l;
      if (r < n && this.below(r, least)) least = r;
      if (least === i) return;
      this.swap(i, least);
      i = least;
    }
  }

  private swap(x: number, y: number): void {
    [this.scores[x], this.scores[y]] = [this.scores[y] as number, this.scores[x] as number];
    [this.items[x], this.items[y]] = [this.items[y] as T, this.items[x] as T];
    [this.order[x], this.order[y]] = [this.order[y] as number, this.order[x] as number];
  }
}
