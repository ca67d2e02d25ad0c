// equal-rate runs measured side by side: each server's share of the measurement taken in slices of a
// second, the servers in turn (A B C, B C A, C A B, ...), so the slow drifts of this shared machine
// (±30 % between runs a minute apart) fall on every server alike and the ratios of one row hold.
// A server's CPU per answer is its process's CPU time over its own slices ÷ its answers in them.
// Each slice's figures are kept too: one round's ratio of two servers says how far a row's ratio
// can be trusted (here a slice's CPU per answer wanders from one second to the next: ±40 % when
// each slice opened its own connections, −10 % to +30 % of the server's median since they are kept).
import { cpuSeconds } from './processes.js';

/** one slice of a server's window: its process's CPU seconds (null without a PID) and its answers */
export interface Slice { cpu: number | null; answers: number }

/** one server's part of an interleaved measurement */
export interface SlicedRun<F> {
  pid: number | null;
  /** before the first slice: the warm-up, and whatever starts the window (e.g. an event-loop scrape) */
  open(): Promise<void>;
  /** one slice (a whole number of seconds), its answers added
   *  up; resolves with the answers (any status) it got */
  slice(seconds: number): Promise<number>;
  /** after the last slice: settle, spot-check, and the figures, given the server's CPU seconds over
   *  its slices and the slices themselves, in round order */
  close(serverCpu: number | null, slices: Slice[]): Promise<F>;
}

export const SLICE_SECONDS = 1;

/** `rounds` slices of SLICE_SECONDS for each run, their order rotating from one round to the next */
export async function interleave<F>(runs: Array<SlicedRun<F>>, rounds: number): Promise<F[]> {
  for (const r of runs) await r.open();
  const slices: Slice[][] = runs.map(() => []);
  for (let k = 0; k < rounds; k++) {
    for (let j = 0; j < runs.length; j++) {
      const i = (k + j) % runs.length;
      const pid = runs[i].pid;
      const before = pid === null ? 0 : cpuSeconds(pid);
      const answers = await runs[i].slice(SLICE_SECONDS);
      slices[i].push({ cpu: pid === null ? null : cpuSeconds(pid) - before, answers });
    }
  }
  const out: F[] = [];
  for (let i = 0; i < runs.length; i++) {
    const cpu = runs[i].pid === null ? null : slices[i].reduce((sum, s) => sum + s.cpu!, 0);
    out.push(await runs[i].close(cpu, slices[i]));
  }
  return out;
}

/**
 * slices per server in an equal-rate run: `--rounds`, else four times the seconds of a closed-loop
 * window, as a server's CPU per answer at a fixed rate wanders from one slice to the next here
 * (2026-11-27, new connections each slice: 86–181 ms for 2,000 answers, the same process; 2026-11-28,
 * connections kept: small /v1 at 2,000 req/s 48–67 µs an answer, median 53); 8 slices gave a row
 * about ±15 %, 16 give about ±10 %
 */
export const roundsFor = (o: { rounds: number | null; duration: number }) => o.rounds ?? Math.max(1, Math.round((4 * o.duration) / SLICE_SECONDS));

/** the spread of a ratio over the rounds: its lower and upper quartile */
export interface Spread { q1: number; q3: number }

/**
 * round by round, `a`'s CPU per answer ÷ `b`'s (slices measured within seconds of each other), as
 * quartiles; null without CPU figures or with fewer than four rounds
 */
export function roundSpread(a: Slice[] | undefined, b: Slice[] | undefined): Spread | null {
  if (a === undefined || b === undefined) return null;
  const ratios: number[] = [];
  for (let k = 0; k < Math.min(a.length, b.length); k++) {
    const [sa, sb] = [a[k], b[k]];
    if (sa.cpu === null || sb.cpu === null || sa.answers === 0 || sb.answers === 0 || sb.cpu === 0) continue;
    ratios.push(sa.cpu / sa.answers / (sb.cpu / sb.answers));
  }
  if (ratios.length < 4) return null;
  ratios.sort((p, q) => p - q);
  return { q1: quantile(ratios, 0.25), q3: quantile(ratios, 0.75) };
}

/** linear interpolation between the closest ranks of sorted values */
function quantile(sorted: number[], p: number): number {
  const at = p * (sorted.length - 1);
  const lo = Math.floor(at);
  const hi = Math.min(sorted.length - 1, lo + 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (at - lo);
}
