// the log destination (src/log-destination.ts) gathers lines into batches: what it holds is written
// when the process exits, however it exits, and lines written after close() still come out.
import { spawnSync } from 'node:child_process';
import { expect, it } from 'vitest';
import { ROOT } from './helpers.js';

/** runs `body` in a node process with `destination` made: its exit code and its stdout's lines */
function run(body: string): { status: number | null; lines: string[] } {
  const script = `import { LogDestination } from './dist/log-destination.js';\nconst destination = new LogDestination();\n${body}`;
  const { status, stdout } = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' });
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
