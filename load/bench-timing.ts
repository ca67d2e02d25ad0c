// how the bench times a call: repeated until a sample is long enough, sampled alternately with the
// memcpy it is compared to, median reported.
import { median } from './machine.js';

export interface Timer {
  /** median ms per call of a and of b, sampled alternately so drift hits both alike */
  alternately(a: () => void, b: () => void): [number, number];
}

/** `samples` per figure; each sample repeats a call until it has run `minSampleMs` */
export function createTimer(samples: number, minSampleMs: number): Timer {
  const timeOnce = (fn: () => void, reps: number): number => {
    const t0 = performance.now();
    for (let r = 0; r < reps; r++) fn();
    return (performance.now() - t0) / reps;
  };
  const repsFor = (fn: () => void): number => {
    fn(); // first call: compile
    const once = timeOnce(fn, 1);
    const reps = Math.max(1, Math.ceil(minSampleMs / Math.max(once, 1e-3)));
    timeOnce(fn, reps); // warm-up at full length
    return reps;
  };
  return {
    alternately(a, b) {
      const ra = repsFor(a);
      const rb = repsFor(b);
      const ta: number[] = [];
      const tb: number[] = [];
      for (let s = 0; s < samples; s++) {
        ta.push(timeOnce(a, ra));
        tb.push(timeOnce(b, rb));
      }
      return [median(ta), median(tb)];
    },
  };
}
