// the log destination (src/log-destination.ts) gathers lines into batches: what it holds is written
// when the process exits, however it exits, and lines written after close() still come out.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { ROOT } from './helpers.js';

/** where the child's stdout goes: a pipe read here (sonic-boom's asynchronous writes) or a file
 *  (batches written at once) */
const SINKS = ['pipe', 'file'] as const;
type Sink = (typeof SINKS)[number];

/** runs `body` in a node process with `destination` made: its exit code, its stdout's lines and its stderr */
function run(body: string, sink: Sink = 'pipe'): { status: number | null; lines: string[]; stderr: string } {
  const script = `import { LogDestination } from './dist/log-destination.js';\nconst destination = new LogDestination();\n${body}`;
  const args = ['--input-type=module', '-e', script];
  if (sink === 'pipe') {
    const { status, stdout, stderr } = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, timeout: 60_000 });
    return { status, lines: stdout.split('\n').filter((l) => l !== ''), stderr };
  }
  const dir = mkdtempSync(join(tmpdir(), 'log-destination-'));
  const file = join(dir, 'stdout');
  const fd = openSync(file, 'w');
  try {
    const { status, stderr } = spawnSync(process.execPath, args, { cwd: ROOT, stdio: ['ignore', fd, 'pipe'], encoding: 'utf8', timeout: 60_000 });
    return { status, lines: readFileSync(file, 'utf8').split('\n').filter((l) => l !== ''), stderr };
  } finally {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  }
}

for (const sink of SINKS) {
  it(`lines still gathered when the process exits at once (process.exit) are written, in order (${sink})`, () => {
    const { status, lines } = run("for (let i = 0; i < 3; i++) destination.write(`line ${i}\\n`);\nprocess.exit(1);", sink);
    expect({ status, lines }).toEqual({ status: 1, lines: ['line 0', 'line 1', 'line 2'] });
  });

  it(`many lines (several batches) and a line after close() all come out, in order (${sink})`, () => {
    const { status, lines } = run("for (let i = 0; i < 500; i++) destination.write(`line ${i} ${'x'.repeat(40)}\\n`);\ndestination.close();\ndestination.write('after close\\n');", sink);
    expect({ status, lines }).toEqual({ status: 0, lines: [...Array.from({ length: 500 }, (_, i) => `line ${i} ${'x'.repeat(40)}`), 'after close'] });
  });

  it(`lines written as bytes (room, gatheredTo) and as text keep their order, over many batches reused as they are written out (${sink})`, () => {
    // bursts of lines, half as bytes straight into the batch, half as text, with the event loop let
    // run between bursts so that sonic-boom writes batches out and they are gathered into again
    const body = `
const line = (i) => \`line \${i} \${'y'.repeat(i % 200)}\\n\`;
let i = 0;
for (let burst = 0; burst < 40; burst++) {
  for (let k = 0; k < 250; k++, i++) {
    const text = line(i);
    const batch = i % 2 === 0 ? destination.room(text.length) : null;
    if (batch === null) destination.write(text);
    else destination.gatheredTo(destination.gathered + batch.write(text, destination.gathered, 'latin1'));
  }
  await new Promise((resolve) => setTimeout(resolve, 5));
}`;
    const { status, lines } = run(body, sink);
    expect(status).toBe(0);
    expect(lines).toHaveLength(10000);
    lines.forEach((got, i) => expect(got).toBe(`line ${i} ${'y'.repeat(i % 200)}`));
  });

  it(`lines longer than a batch between short ones come out whole and in turn, the batches after them too (${sink})`, () => {
    // a line past a batch's size goes to sonic-boom on its own: the batches handed over after it must
    // not be taken for written (and gathered into again) before they are (4 MB of long lines: well
    // under what sonic-boom may hold before it drops lines)
    const body = `
const line = (i) => i % 100 === 0 ? \`long \${i} \${'z'.repeat(70000 + i)}\\n\` : \`line \${i} \${'w'.repeat(300 + (i % 7))}\\n\`;
let i = 0;
for (let burst = 0; burst < 20; burst++) {
  for (let k = 0; k < 300; k++, i++) destination.write(line(i));
  await new Promise((resolve) => setImmediate(resolve));
}`;
    const { status, lines } = run(body, sink);
    expect(status).toBe(0);
    expect(lines).toHaveLength(6000);
    lines.forEach((got, i) => expect(got).toBe(i % 100 === 0 ? `long ${i} ${'z'.repeat(70000 + i)}` : `line ${i} ${'w'.repeat(300 + (i % 7))}`));
  });
}

it('to a file, a full batch is written as it is handed over, before the event loop turns; the rest at exit', () => {
  // 2,000 lines of 100 bytes: three batches of 64 KiB handed over, the rest still gathered
  const body = `
import { readFileSync } from 'node:fs';
for (let i = 0; i < 2000; i++) destination.write(\`line \${String(i).padStart(4, '0')} \${'v'.repeat(89)}\\n\`);
process.stderr.write(String(readFileSync('/proc/self/fd/1', 'utf8').length));`;
  const { status, lines, stderr } = run(body, 'file');
  expect(status).toBe(0);
  // whole lines, three batches' worth (a batch is handed over when a line might not fit), not all
  const seen = Number(stderr);
  expect(seen % 100).toBe(0);
  expect(seen).toBeGreaterThan(3 * (65536 - 1000));
  expect(seen).toBeLessThanOrEqual(3 * 65536);
  expect(lines).toEqual(Array.from({ length: 2000 }, (_, i) => `line ${String(i).padStart(4, '0')} ${'v'.repeat(89)}`));
});

it('a reader that stops holds at most 16 MiB: later lines are dropped, counted and told once it reads again', async () => {
  // 200,000 lines of ~210 bytes (42 MB) into a pipe nobody reads until the child says it wrote them all
  const script = `import { LogDestination } from './dist/log-destination.js';
const destination = new LogDestination();
const told = [];
destination.onDropped = (lines) => { told.push(lines); process.stderr.write(\`dropped \${lines}\\n\`); };
let i = 0;
for (let burst = 0; burst < 200; burst++) {
  for (let k = 0; k < 1000; k++, i++) destination.write(\`line \${i} \${'d'.repeat(200)}\\n\`);
  await new Promise((resolve) => setImmediate(resolve));
}
process.stderr.write(\`wrote \${i} held \${process.memoryUsage().arrayBuffers}\\n\`);
while (told.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));`;
  // a child that never hears of its drops would wait forever: it is killed after 50 s
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], timeout: 50_000 });
  let stderr = '';
  const chunks: Buffer[] = [];
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      // all written: now read
      if (stderr.includes('wrote ')) resolve();
    });
    child.once('exit', () => reject(new Error(`the child exited before it wrote everything: ${stderr}`)));
  });
  child.stdout.on('data', (d: Buffer) => chunks.push(d));
  const status = await exited;
  await new Promise((resolve) => setImmediate(resolve));
  expect(status).toBe(0);
  const held = Number(/held (\d+)/.exec(stderr)![1]);
  expect(held).toBeLessThan(32 * 1024 * 1024);
  const dropped = [...stderr.matchAll(/dropped (\d+)/g)].reduce((sum, m) => sum + Number(m[1]), 0);
  expect(dropped).toBeGreaterThan(0);
  const lines = Buffer.concat(chunks).toString('utf8').split('\n').filter((l) => l !== '');
  // what came out is whole lines in order, and with what was dropped, every line
  let last = -1;
  for (const line of lines) {
    const m = /^line (\d+) d{200}$/.exec(line);
    expect(m).not.toBeNull();
    expect(Number(m![1])).toBeGreaterThan(last);
    last = Number(m![1]);
  }
  expect(lines.length + dropped).toBe(200_000);
}, 60_000);

it('an idle destination sets no timer; a line sets one, which hands it over, and the next line after that sets another', () => {
  // every Timeout made in the process is counted (async_hooks), from before the destination exists
  const script = `
import { createHook } from 'node:async_hooks';
let timers = 0;
createHook({ init(id, type) { if (type === 'Timeout') timers++; } }).enable();
const { LogDestination } = await import('./dist/log-destination.js');
const destination = new LogDestination();
await new Promise((resolve) => setImmediate(resolve));
const seen = { idle: timers };
destination.write('one\\n');
destination.write('two\\n');
seen.afterTwoLines = timers;
seen.gathered = destination.gathered;
// the timer of the first line hands both over: gathered falls to 0 with nothing else done
await new Promise((resolve) => { const poll = setInterval(() => { if (destination.gathered === 0) { clearInterval(poll); resolve(); } }, 5); });
const beforeThird = timers;
destination.write('three\\n');
seen.armedByThird = timers - beforeThird;
process.stderr.write(JSON.stringify(seen));
`;
  // a destination whose timer never fired would poll forever: the child is given 20 s
  const { status, stdout, stderr } = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8', timeout: 20_000 });
  expect(status).toBe(0);
  expect(JSON.parse(stderr)).toEqual({ idle: 0, afterTwoLines: 1, gathered: 'one\ntwo\n'.length, armedByThird: 1 });
  expect(stdout.split('\n').filter((l) => l !== '')).toEqual(['one', 'two', 'three']);
});
