// the log destination (src/log-destination.ts) gathers lines into batches: what it holds is written
// when the process exits, however it exits, and lines written after close() still come out.
import { spawnSync } from 'node:child_process';
import { expect, it } from 'vitest';
import { ROOT } from './helpers.js';

/** runs `body` in a node process with `destination` made: its exit code and its stdout's lines */
function run(body: string): { status: number | null; lines: string[] } {
  const script = `import { LogDestination } from './dist/log-destination.js';\nconst destination = new LogDestination();\n${body}`;
  const { status, stdout } = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return { status, lines: stdout.split('\n').filter((l) => l !== '') };
}

it('lines still gathered when the process exits at once (process.exit) are written, in order', () => {
  expect(run("for (let i = 0; i < 3; i++) destination.write(`line ${i}\\n`);\nprocess.exit(1);"))
    .toEqual({ status: 1, lines: ['line 0', 'line 1', 'line 2'] });
});

it('many lines (several batches) and a line after close() all come out, in order', () => {
  expect(run("for (let i = 0; i < 500; i++) destination.write(`line ${i} ${'x'.repeat(40)}\\n`);\ndestination.close();\ndestination.write('after close\\n');"))
    .toEqual({ status: 0, lines: [...Array.from({ length: 500 }, (_, i) => `line ${i} ${'x'.repeat(40)}`), 'after close'] });
});

it('lines written as bytes (room, gatheredTo) and as text keep their order, over many batches reused as they are written out', () => {
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
  const { status, lines } = run(body);
  expect(status).toBe(0);
  expect(lines).toHaveLength(10000);
  lines.forEach((got, i) => expect(got).toBe(`line ${i} ${'y'.repeat(i % 200)}`));
});

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
