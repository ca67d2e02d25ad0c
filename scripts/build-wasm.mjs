// compiles each kernel family in src/kernels/wasm/*.wat to dist/kernels/*.wasm with wabt (SIMD, threads
// and bulk memory enabled: the kernels use v128, import a shared memory and copy with memory.copy).
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import wabtInit from 'wabt';

const features = { simd: true, threads: true, bulk_memory: true };

const wabt = await wabtInit();
await mkdir(new URL('../dist/kernels/', import.meta.url), { recursive: true });
const SOURCES = new URL('../src/kernels/wasm/', import.meta.url);
const modules = (await readdir(SOURCES)).filter((f) => f.endsWith('.wat')).map((f) => f.slice(0, -'.wat'.length)).sort();
for (const name of modules) {
  const path = `src/kernels/wasm/${name}.wat`;
  let module;
  try {
    module = wabt.parseWat(path, await readFile(new URL(`../${path}`, import.meta.url), 'utf8'), features);
    module.validate(features);
  } catch (err) {
    // wabt's messages name the line and column; its stack is one minified line
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  }
  const { buffer } = module.toBinary({ write_debug_names: true });
  module.destroy();
  await writeFile(new URL(`../dist/kernels/${name}.wasm`, import.meta.url), buffer);
  console.log(`build-wasm: dist/kernels/${name}.wasm, ${buffer.byteLength} bytes`);
}
