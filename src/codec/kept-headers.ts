// what is worked out from headers, kept by a key of everything it depends on: the same few shapes
// come again and again (a model's hidden size), and so do a client's Content-Type and Accept; an
// answer's header made once is copied, not encoded, on every later answer, a negotiation looked up.
// Bounded: cleared when full, so a client sending ever new keys costs no more than before.
export class KeptHeaders<T = Buffer> {
  private readonly byKey = new Map<string, T>();

  constructor(private readonly max = 256) {}

  // the last of getShaped: a repeat (the common case) is found by comparing, with no key built
  private lastTag = '';
  private lastDtype = '';
  private lastShape: number[] = [];
  private lastValue: T | undefined = undefined;

  /** as `get`, keyed by a tag, a dtype and a shape */
  getShaped(tag: string, dtype: string, shape: readonly number[], make: () => T): T {
    if (this.lastValue !== undefined && tag === this.lastTag && dtype === this.lastDtype && sameShape(shape, this.lastShape)) return this.lastValue;
    const value = this.get(`${tag}:${dtype}:${shape.join(',')}`, make);
    this.lastTag = tag;
    this.lastDtype = dtype;
    this.lastShape = shape.slice();
    this.lastValue = value;
    return value;
  }

  get(key: string, make: () => T): T {
    let header = this.byKey.get(key);
    if (header === undefined) {
      header = make();
      if (this.byKey.size >= this.max) this.byKey.clear();
      this.byKey.set(key, header);
    }
    return header;
  }
}

function sameShape(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
