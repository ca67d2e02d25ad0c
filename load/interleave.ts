// equal-rate runs measured side by side: each server's share of the measurement taken in slices of a
// second, the servers in turn (A B C, B C A, C A B, ...), so the slow drifts of this shared machine
// (±30 % between runs a minute apart) fall on every server alike and the ratios of one row hold.
// A server's CPU per answer is its process's CPU time over its own slices ÷ its answers in them.
import { cpuSeconds } from './processes.js';

/** one server's part of an interleaved measurement */
export interface SlicedRun<F> {
  pid: number | null;
  /** before the first slice: the warm-up, and whatever starts the window (e.g. an event-loop scrape) */
  open(): Promise<void>;
  /** one slice (a whole number of seconds: the load generators pace by the second), its answers added up */
  slice(seconds: number): Promise<void>;
  /** after the last slice: settle, spot-check, and the figures, given the server's CPU seconds over its slices */
  close(serverCpu: number | null): Promise<F>;
}

export const SLICE_SECONDS = 1;

/** `rounds` slices of SLICE_SECONDS for each run, their order rotating from one round to the next */
export async function interleave<F>(runs: Array<SlicedRun<F>>, rounds: number): Promise<F[]> {
  for (const r of runs) await r.open();
  const cpu = runs.map(() => 0);
  for (let k = 0; k < rounds; k++) {
    for (let j = 0; j < runs.length; j++) {
      const i = (k + j) % runs.length;
      const pid = runs[i].pid;
      const before = pid === null ? 0 : cpuSeconds(pid);
      await runs[i].slice(SLICE_SECONDS);
      if (pid !== null) cpu[i] += cpuSeconds(pid) - before;
    }
  }
  const out: F[] = [];
  for (let i = 0; i < runs.length; i++) out.push(await runs[i].close(runs[i].pid === null ? null : cpu[i]));
  return out;
}

/**
 * slices per server for a run of `duration` seconds: twice the seconds of a closed-loop window, as
 * a server's cost at a fixed rate wanders by a third from one second to the next here (the same
 * process, same rate, minutes apart: 0.086 and 0.120 ms a request) and the mean of more seconds holds
 */
export const roundsFor = (duration: number) => Math.max(1, Math.round((2 * duration) / SLICE_SECONDS));
