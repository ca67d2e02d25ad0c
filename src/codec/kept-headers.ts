// what is worked out from headers, kept by a key of everything it depends on: the same few shapes
// come again and again (a model's hidden size), and so do a client's Content-Type and Accept; an
// answer's header made once is copied, not encoded, on every later answer, a negotiation looked up.
// Bounded: cleared when full, so a client sending ever new keys costs no more than before.
export class KeptHeaders<T = Buffer> {
  private readonly byKey = new Map<string, T>();

  constructor(private readonly max = 256) {}

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
