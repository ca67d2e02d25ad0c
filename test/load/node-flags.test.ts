// the service runs with the same V8 flags wherever it starts: `npm start`, the image's CMD and the
// load suite's spawn (load/processes.ts says why it needs them)
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { NODE_FLAGS } from '../../load/processes.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const read = (path: string) => readFileSync(ROOT + path, 'utf8');

describe('node flags of the service', () => {
  it('npm start passes the load suite\'s flags', () => {
    const start: string = JSON.parse(read('package.json')).scripts.start;
    expect(start).toMatch(/&& node (.*) dist\/server\.js$/);
    expect(start.match(/&& node (.*) dist\/server\.js$/)![1].split(' ')).toEqual(NODE_FLAGS);
  });

  it('the image\'s CMD passes the same flags', () => {
    const cmd = read('docker/Dockerfile').split('\n').filter((line) => line.startsWith('CMD '));
    expect(cmd).toHaveLength(1);
    expect(JSON.parse(cmd[0].slice(4))).toEqual(['node', ...NODE_FLAGS, 'dist/server.js']);
  });

  it('the flags are V8 flags this node accepts', () => {
    // an unknown flag makes node exit with "bad option"; this one must run a script
    expect(execFileSync(process.execPath, [...NODE_FLAGS, '-e', 'process.stdout.write("ok")'], { encoding: 'utf8' })).toBe('ok');
  });
});
