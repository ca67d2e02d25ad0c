// what a figure was measured on and with which command, recorded beside it.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism, release, totalmem } from 'node:os';

export interface Machine {
  /** `nproc`: CPUs this process may run on */
  nproc: number;
  cpuModel: string;
  memoryGiB: number;
  kernel: string;
  node: string;
}

export function machine(): Machine {
  let nproc = availableParallelism();
  try {
    nproc = Number(execFileSync('nproc', { encoding: 'utf8' }).trim()) || nproc;
  } catch { /* no coreutils: keep node's count */ }
  let cpuModel = 'unknown';
  try {
    cpuModel = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim() ?? cpuModel;
  } catch { /* not Linux */ }
  return { nproc, cpuModel, memoryGiB: Math.round(totalmem() / 2 ** 30), kernel: release(), node: process.version };
}

/** how this run was started, as a reader would retype it */
export function commandLine(script: string): string {
  const args = process.argv.slice(2).map((a) => (/^[\w./:=,-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`));
  // `npm run load -- …` passes its arguments on unchanged; the :ci scripts add their own
  const event = process.env.npm_lifecycle_event;
  if (event === 'load' || event === 'bench') return [`npm run ${event}`, ...(args.length > 0 ? ['--', ...args] : [])].join(' ');
  return ['node', script, ...args].join(' ');
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}
