// CPU hogs: child processes that spin `node -e` busy loops beside the server under test, the noisy
// neighbours of a shared host. Started once each has said it spins; stopped by their PIDs.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';

const SPIN = "process.stdout.write('spinning\\n'); for (;;);";

export interface Hogs {
  pids: number[];
  /** user + system CPU seconds all hogs have used so far (/proc/<pid>/stat) */
  cpuSeconds(): number;
  /** SIGKILL to each by its PID; safe to call twice */
  kill(): void;
}

/** user + system CPU seconds of a process, from /proc/<pid>/stat (clock ticks of 1/100 s) */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // fields after the command, which may hold spaces, in parentheses: utime and stime are 14 and 15
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

export async function startHogs(count: number): Promise<Hogs> {
  const children: ChildProcess[] = [];
  const kill = () => {
    process.off('exit', kill);
    for (const child of children) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      try {
        process.kill(child.pid!, 'SIGKILL');
      } catch {
        // it exited and we have not heard yet
      }
    }
  };
  // afterAll kills them; this covers a test worker that exits without running it
  process.once('exit', kill);
  try {
    for (let i = 0; i < count; i++) {
      const child = spawn(process.execPath, ['-e', SPIN], { stdio: ['ignore', 'pipe', 'inherit'] });
      children.push(child);
    }
    await Promise.all(children.map(async (child) => {
      const [chunk] = await once(child.stdout!, 'data') as [Buffer];
      if (chunk.toString() !== 'spinning\n') throw new Error(`a hog said ${chunk.toString()}`);
      child.stdout!.resume();
    }));
  } catch (err) {
    kill();
    throw err;
  }
  const pids = children.map((c) => c.pid!);
  return { pids, cpuSeconds: () => pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0), kill };
}
