// How fast a request body's bytes reach shared memory (issue 11). V8 copies into a SharedArrayBuffer
// with relaxed atomics, byte by byte when source and destination differ modulo 8; socket chunks land
// at any offset. Prints GB/s for a 512 KiB copy from a Buffer into: ordinary memory, shared memory
// with the offsets agreeing modulo 8, and shared memory with them disagreeing; then the staged path
// (chunk → small ordinary buffer at the destination's phase → shared) that the body reader uses.
// Run it with and without GLIBC_TUNABLES=glibc.cpu.x86_rep_movsb_threshold=4294967295 to see
// whether glibc's `rep movsb` choice slows ordinary copies here.
const SIZE = 512 * 1024;
const ROUNDS = 400;
const source = Buffer.allocUnsafeSlow(SIZE + 64).fill(7);
const ordinary = Buffer.allocUnsafeSlow(SIZE + 64);
const shared = new Uint8Array(new SharedArrayBuffer(SIZE + 64));
const staging = Buffer.allocUnsafeSlow(64 * 1024 + 8);

function rate(label, copy) {
  for (let i = 0; i < 20; i++) copy(); // warm up
  const started = process.hrtime.bigint();
  for (let i = 0; i < ROUNDS; i++) copy();
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  console.log(`${label.padEnd(46)} ${((SIZE * ROUNDS) / seconds / 1e9).toFixed(2).padStart(7)} GB/s`);
}

const src = (phase) => source.subarray(phase, phase + SIZE);
rate('Buffer → ordinary (set)', () => ordinary.set(src(3), 3));
rate('Buffer → ordinary (Buffer.copy)', () => src(3).copy(ordinary, 3));
rate('Buffer → shared, same phase mod 8 (set)', () => shared.set(src(3), 3));
rate('Buffer → shared, other phase mod 8 (set)', () => shared.set(src(3), 0));
rate('Buffer → shared, other phase mod 8 (Buffer.copy)', () => src(3).copy(shared, 0));
// the staged path: 64 KiB pieces through an ordinary buffer placed at the destination's phase
rate('Buffer → staging → shared, other phase', () => {
  const chunk = 64 * 1024;
  for (let at = 0; at < SIZE; at += chunk) {
    const piece = source.subarray(3 + at, 3 + at + chunk);
    const phase = at % 8; // destination offset 0 + at
    piece.copy(staging, phase);
    shared.set(staging.subarray(phase, phase + chunk), at);
  }
});
