// ModelStreamInfer (OIP.md "Streams"): each request read is computed at once, beside the others, and
// answered in request order; a failure is answered in its place (or, with `triton_grpc_error: true`,
// ends the stream after the answers before it). Reading pauses while WINDOW requests are unanswered,
// so one stream holds a bounded number of requests whatever its client sends.
import { status as Status, type ServerDuplexStream } from '@grpc/grpc-js';
import type { Admitted } from '../engine/admission.js';
import { serviceError } from '../errors.js';
import { encodeStreamError } from './infer-codec.js';
import { InferFailure, type InferAnswer } from './infer.js';
import type { ModelInferRequest } from './infer-request.js';
import { grpcStatus } from './status.js';

/** requests of one stream computed or waiting for their turn to be answered, at most */
export const WINDOW = 32;

export interface StreamDeps {
  infer(message: ModelInferRequest, onAdmitted: (admitted: Admitted) => void): Promise<InferAnswer>;
  countRequest(model: string, ok: boolean): void;
  /** once, with the stream's final code */
  ended(code: Status): void;
  log(err: Error, message: string): void;
}

type Outcome = { answer: InferAnswer } | { failure: InferFailure };

export function serveStream(call: ServerDuplexStream<ModelInferRequest, Buffer>, deps: StreamDeps): { drain(): void } {
  const failFast = call.metadata.get('triton_grpc_error')[0] === 'true';
  const working = new Set<Admitted>();
  let unanswered = 0;
  let tail: Promise<void> = Promise.resolve();
  let reading = true; // false once the stream stops taking requests: ended, cancelled, failed fast or draining
  let halfClosed = false;
  let draining = false;
  let finished = false;

  const finish = (code: Status, status?: ReturnType<typeof grpcStatus>) => {
    if (finished) return;
    finished = true;
    reading = false;
    for (const admitted of working) admitted.end(false);
    deps.ended(code);
    if (status === undefined) call.end();
    else call.emit('error', status);
  };
  /** once every read request is answered: the stream ends OK (client done) or UNAVAILABLE (draining) */
  const settle = () => {
    if (unanswered > 0 || finished) return;
    if (draining) finish(Status.UNAVAILABLE, grpcStatus(serviceError('shuttingDown')));
    else if (halfClosed) finish(Status.OK);
  };

  const write = (message: ModelInferRequest, outcome: Outcome) => {
    unanswered--;
    if (finished) {
      if ('answer' in outcome) outcome.answer.release();
      return;
    }
    if ('answer' in outcome) {
      deps.countRequest(message.model_name, true);
      // its memory goes once grpc-js has copied the bytes into its frame (or the stream is gone)
      call.write(outcome.answer.response, outcome.answer.release);
    } else {
      deps.countRequest(message.model_name, false);
      if (outcome.failure.status.code === Status.INTERNAL) deps.log((outcome.failure.cause as Error) ?? outcome.failure, 'grpc stream request failed');
      if (failFast) return finish(outcome.failure.status.code, outcome.failure.status);
      call.write(encodeStreamError(outcome.failure.status.details, outcome.failure.id));
    }
    if (reading && call.isPaused() && unanswered < WINDOW) call.resume();
    settle();
  };

  call.on('data', (message: ModelInferRequest) => {
    if (!reading) return;
    unanswered++;
    if (unanswered >= WINDOW) call.pause();
    // held while the request works, so that a stream that stops drops its queued work
    let admitted: Admitted | null = null;
    const outcome: Promise<Outcome> = deps.infer(message, (a) => working.add((admitted = a))).then(
      (answer) => ({ answer }),
      (err: unknown) => ({ failure: err instanceof InferFailure ? err : new InferFailure(grpcStatus(serviceError('internal')), message.id) }),
    ).finally(() => admitted !== null && working.delete(admitted));
    // each answer waits for the ones before it
    tail = tail.then(() => outcome).then((result) => write(message, result));
  });
  call.on('end', () => {
    halfClosed = true;
    settle();
  });
  // the client cancelled, or the stream's deadline passed: unanswered work is dropped
  call.on('cancelled', () => finish(Status.CANCELLED));
  return {
    drain() {
      draining = true;
      reading = false;
      settle();
    },
  };
}
