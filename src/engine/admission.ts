// admission (API.md §5): a request is refused — 503 with Retry-After, at once, nothing lost — only
// when a hard limit is reached: draining, a pool that could not load its kernels, or every work
// slot (MAX_QUEUE + WORKERS) taken; never because the host is busy. A request still receiving its
// body holds no work slot: it takes one when its body is in, so a slow upload never keeps complete
// requests out (what it holds meanwhile is bounded by the memory budget and the body's minimum rate,
// http/body-reader.ts). The same rule for every front end.
import type { Config } from '../config.js';
import { serviceError } from '../errors.js';
import { Cancellation } from './cancellation.js';

export interface ServiceState {
  /** set on SIGTERM: readiness answers 503 and new work is refused */
  draining: boolean;
  /** the workers could not load their kernels (a broken build): readiness answers 503 and work is refused */
  poolFailed: boolean;
  /** requests holding a work slot: body in, answer not yet written */
  inFlight: number;
  /** requests admitted and still receiving their bodies */
  receiving: number;
}

/** an admitted request: its cancellation, its work slot once its body is in, its end */
export interface Admitted {
  cancellation: Cancellation;
  /** the body is in: takes a work slot; throws the 503 when every slot is taken */
  startWork(): void;
  /** `answered`: false when the client went away first, which cancels its queued work */
  end(answered: boolean): void;
}

export interface Admission {
  /** throws the 503 of the limit reached; `timeoutMs`: the request's deadline, ≤ REQUEST_TIMEOUT_MS */
  admit(timeoutMs: number): Admitted;
}

export function createAdmission(config: Pick<Config, 'maxQueue' | 'workers'>, state: ServiceState): Admission {
  // each working request holds at most one body and its shared memory: this bounds memory and queueing
  const maxInFlight = config.maxQueue + config.workers;
  const refusal = () => {
    if (state.draining) return serviceError('shuttingDown');
    if (state.poolFailed) return serviceError('poolFailed');
    // every slot taken now: refused before its body is read, which the client need not send
    if (state.inFlight >= maxInFlight) return serviceError('tooManyInFlight');
    return null;
  };
  return {
    admit(timeoutMs) {
      const refused = refusal();
      if (refused !== null) throw refused;
      state.receiving++;
      const cancellation = new Cancellation(timeoutMs);
      let working = false;
      let ended = false;
      return {
        cancellation,
        startWork() {
          if (working || ended) return;
          if (state.inFlight >= maxInFlight) throw serviceError('tooManyInFlight');
          state.receiving--;
          state.inFlight++;
          working = true;
        },
        end(answered) {
          if (ended) return;
          ended = true;
          if (working) state.inFlight--;
          else state.receiving--;
          if (answered) cancellation.dispose();
          else cancellation.cancel();
        },
      };
    },
  };
}
