// CPU hogs: child processes that spin `node -e` busy loops beside the server under test, the noisy
// neighbours of a shared host. Started once each has said it spins; stopped by their PIDs.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { cpuSeconds } from '../../load/processes.js';

const SPIN = "process.stdout.write('spinning\\n'); for (;;);";

export interface Hogs {
  pids: number[];
  /** CPU seconds all hogs have used so far (load/processes.ts's cpuSeconds) */
  cpuSeconds(): number;
  /** SIGKILL to each by its PID; safe to call twice */
  kill(): void;
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
