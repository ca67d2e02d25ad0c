// compiles src/kernels/wasm/norm.wat to dist/kernels/norm.wasm with wabt (SIMD and
// threads enabled: the kernels use v128 and import a shared memory).
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import wabtInit from 'wabt';

const source = new URL('../src/kernels/wasm/norm.wat', import.meta.url);
const target = new URL('../dist/kernels/norm.wasm', import.meta.url);
const features = { simd: true, threads: true };

const wabt = await wabtInit();
let module;
try {
  module = wabt.parseWat('src/kernels/wasm/norm.wat', await readFile(source, 'utf8'), features);
  module.validate(features);
} catch (err) {
  // wabt's messages name the line and column; its stack is one minified line
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
}
const { buffer } = module.toBinary({ write_debug_names: true });
module.destroy();
await mkdir(new URL('.', target), { recursive: true });
await writeFile(target, buffer);
console.log(`build-wasm: dist/kernels/norm.wasm, ${buffer.byteLength} bytes`);
