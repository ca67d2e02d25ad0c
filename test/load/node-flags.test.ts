// the service's process starts the same way wherever it starts: `npm start`, the image, and the load
// suite's spawn (load/processes.ts says why it needs these V8 flags and this glibc tunable)
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { NODE_FLAGS, SERVICE_ENV } from '../../load/processes.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const read = (path: string) => readFileSync(ROOT + path, 'utf8');
const envWords = Object.entries(SERVICE_ENV).map(([name, value]) => `${name}=${value}`);

describe('how the service process is started', () => {
  it('npm start sets the load suite\'s environment and flags', () => {
    const start: string = JSON.parse(read('package.json')).scripts.start;
    const command = start.match(/^npm run build && (.*) dist\/server\.js$/);
    expect(command).not.toBeNull();
    expect(command![1].split(' ')).toEqual([...envWords, 'node', ...NODE_FLAGS]);
  });

  it('the image sets the same environment and its CMD passes the same flags', () => {
    const lines = read('docker/Dockerfile').split('\n');
    const cmd = lines.filter((line) => line.startsWith('CMD '));
    expect(cmd).toHaveLength(1);
    expect(JSON.parse(cmd[0].slice(4))).toEqual(['node', ...NODE_FLAGS, 'dist/server.js']);
    for (const word of envWords) expect(lines).toContain(`ENV ${word}`);
  });

  it('the flags are V8 flags this node accepts', () => {
    // an unknown flag makes node exit with "bad option"; these must let it run a script
    expect(execFileSync(process.execPath, [...NODE_FLAGS, '-e', 'process.stdout.write("ok")'], { encoding: 'utf8' })).toBe('ok');
  });

  it('the flags turn V8\'s allocation-site pretenuring off', () => {
    // objects from one literal that all outlive their first scavenges: V8 decides to allocate that
    // literal's objects in the old generation (Node 20; Node 22 gets to "maybe"), and its own trace prints it
    const probe = 'const keep = []; for (let i = 0; i < 800000; i++) keep.push({ a: i, b: i + 1 }); process.stdout.write("ok");';
    const trace = (flags: string[]) =>
      execFileSync(process.execPath, [...flags, '--trace-pretenuring-statistics', '-e', probe], { encoding: 'utf8' });
    const without = NODE_FLAGS.filter((flag) => flag !== '--no-allocation-site-pretenuring');
    expect(without).toHaveLength(NODE_FLAGS.length - 1);
    expect(trace(without)).toMatch(/=> (maybe )?tenure/); // the probe sets it off on this runtime
    expect(trace(NODE_FLAGS)).toMatch(/^ok$/); // no decision traced at all
  });
});
