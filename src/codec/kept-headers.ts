// answer headers kept by a key of everything they depend on: the same few shapes come again and again
// (a model's hidden size), and a header made once is copied, not encoded, on every later answer.
// Bounded: cleared when full, so a client sending ever new shapes costs no more than before.
export class KeptHeaders {
  private readonly byKey = new Map<string, Buffer>();

  constructor(private readonly max = 256) {}

  get(key: string, make: () => Buffer): Buffer {
    let header = this.byKey.get(key);
    if (header === undefined) {
      header = make();
      if (this.byKey.size >= this.max) this.byKey.clear();
      this.byKey.set(key, header);
    }
    return header;
  }
}
