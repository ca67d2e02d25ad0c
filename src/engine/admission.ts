// admission: whether a request may start work now, by the hard limits (API.md §5) — draining, a pool
// that could not load its kernels, the in-flight count — and, once admitted, its cancellation and its
// place in the count until its answer is out. The same rule for every front end.
import type { Config } from '../config.js';
import { serviceError } from '../errors.js';
import { Cancellation } from './cancellation.js';

export interface ServiceState {
  /** set on SIGTERM: readiness answers 503 and new work is refused */
  draining: boolean;
  /** the workers could not load their kernels (a broken build): readiness answers 503 and work is refused */
  poolFailed: boolean;
  /** requests admitted and not yet answered */
  inFlight: number;
}

/** an admitted request: cancel it, and end it once its answer has been written or its client left */
export interface Admitted {
  cancellation: Cancellation;
  /** `answered`: false when the client went away first, which cancels its queued work */
  end(answered: boolean): void;
}

export interface Admission {
  /** throws the 503 of the limit reached; `timeoutMs`: the request's deadline, ≤ REQUEST_TIMEOUT_MS */
  admit(timeoutMs: number): Admitted;
}

export function createAdmission(config: Pick<Config, 'maxQueue' | 'workers'>, state: ServiceState): Admission {
  // each admitted request holds at most one body and its shared memory: this bounds memory
  const maxInFlight = config.maxQueue + config.workers;
  return {
    admit(timeoutMs) {
      if (state.draining) throw serviceError('shuttingDown');
      if (state.poolFailed) throw serviceError('poolFailed');
      if (state.inFlight >= maxInFlight) throw serviceError('tooManyInFlight');
      state.inFlight++;
      const cancellation = new Cancellation(timeoutMs);
      let ended = false;
      return {
        cancellation,
        end(answered) {
          if (ended) return;
          ended = true;
          state.inFlight--;
          if (answered) cancellation.dispose();
          else cancellation.cancel();
        },
      };
    },
  };
}
