// ModelStreamInfer (OIP.md "Streams"): each request read is computed at once, beside the others, and
// answered in request order; a failure is answered in its place (or, with `triton_grpc_error: true`,
// ends the stream after the answers before it). A request counts against the stream's WINDOW from
// when it is read until grpc-js has taken its answer (its write's callback): reading pauses at
// WINDOW, so a stream holds a bounded number of requests' memory and work slots whatever its client
// sends, and a client that stops reading its answers stops the stream's reading too. Such a stream
// is ended after `stallMs` without progress (or at its deadline), its held memory and slots given back.
import { status as Status, type ServerDuplexStream } from '@grpc/grpc-js';
import { constants as http2 } from 'node:http2';
import type { Admitted } from '../engine/admission.js';
import { serviceError } from '../errors.js';
import { MODELS } from '../http/v2/models.js';
import { encodeStreamError } from './infer-codec.js';
import { InferFailure, type InferAnswer } from './infer.js';
import type { ModelInferRequest } from './infer-request.js';
import { grpcStatus, type GrpcStatus } from './status.js';
import { SmallSet } from '../small-set.js';

/** requests of one stream read and not yet answered (handed to grpc-js), at most */
export const WINDOW = 32;

export interface StreamDeps {
  /** grpc/infer.ts's infer(): the answer at once when computed inline, else a promise; throws or rejects with an InferFailure */
  infer(message: ModelInferRequest, onAdmitted: (admitted: Admitted) => void): InferAnswer | Promise<InferAnswer>;
  countRequest(model: string, ok: boolean): void;
  /** once, with the stream's final code */
  ended(code: Status): void;
  log(err: Error, message: string): void;
  /** how long a full window may go without an answer taken by the client before the stream is ended */
  stallMs: number;
}

type Outcome = { answer: InferAnswer } | { failure: InferFailure };

/** resets the call's HTTP/2 stream: grpc-js keeps a stream whose client reads nothing open (its
 *  trailers wait behind unsent answers), with no public way to end it */
function resetStream(call: ServerDuplexStream<ModelInferRequest, Buffer>): void {
  let inner = (call as unknown as { call?: unknown }).call as { stream?: { close?(code: number): void }; nextCall?: unknown } | undefined;
  for (let i = 0; i < 4 && inner !== undefined; i++) {
    if (typeof inner.stream?.close === 'function') {
      inner.stream.close(http2.NGHTTP2_CANCEL);
      return;
    }
    inner = inner.nextCall as typeof inner;
  }
}

export function serveStream(call: ServerDuplexStream<ModelInferRequest, Buffer>, deps: StreamDeps): { drain(): void } {
  const failFast = call.metadata.get('triton_grpc_error')[0] === 'true';
  const working = new SmallSet<Admitted>();
  /** answers handed to call.write whose callback has not come: released when the stream stops */
  const sending = new SmallSet<() => void>();
  let held = 0; // requests read whose answer grpc-js has not taken yet
  let computing = 0; // requests read whose outcome is not written yet
  let tail: Promise<void> = Promise.resolve();
  let reading = true; // false once the stream stops taking requests: ended, cancelled, failed fast or draining
  let halfClosed = false;
  let draining = false;
  let finished = false;
  let stall: NodeJS.Timeout | null = null;

  /** `abort`: the stream is gone or given up (cancelled, closed, past its deadline, stalled): the
   *  answers grpc-js has not taken will never be sent, so their memory goes now; otherwise they go
   *  out first, then the status */
  const finish = (code: Status, status?: GrpcStatus, abort = false) => {
    if (finished) return;
    finished = true;
    reading = false;
    if (stall !== null) clearTimeout(stall);
    clearTimeout(deadline);
    for (const admitted of working.values()) admitted.end(false);
    deps.ended(code);
    if (abort) {
      dropSending();
      resetStream(call);
    } else if (status === undefined) call.end();
    else call.emit('error', status);
  };
  /** the answers grpc-js never took: their memory and slots go */
  const dropSending = () => {
    for (const release of sending.values()) release();
  };
  /** once every read request is answered: the stream ends OK (client done) or UNAVAILABLE (draining) */
  const settle = () => {
    if (computing > 0 || finished) return;
    if (draining) finish(Status.UNAVAILABLE, grpcStatus(serviceError('shuttingDown')));
    else if (halfClosed) finish(Status.OK);
  };
  /** a full window that makes no progress for stallMs: the client is not reading */
  const watchStall = () => {
    if (stall !== null) clearTimeout(stall);
    stall = held >= WINDOW ? setTimeout(() => finish(Status.DEADLINE_EXCEEDED, undefined, true), deps.stallMs).unref() : null;
  };
  // the stream's own deadline bounds it (grpc-js cannot end a stream whose client reads nothing)
  const at = call.getDeadline();
  const deadlineMs = (at instanceof Date ? at.getTime() : at) - Date.now();
  const deadline = setTimeout(() => finish(Status.DEADLINE_EXCEEDED, undefined, true), Math.min(Math.max(deadlineMs, 0), 2 ** 31 - 1)).unref();
  if (!Number.isFinite(deadlineMs)) clearTimeout(deadline);

  /** hands an answer to grpc-js; the request stops counting once grpc-js has taken it */
  const send = (bytes: Buffer, release: () => void) => {
    let taken = false;
    const done = () => {
      if (taken) return;
      taken = true;
      sending.delete(done);
      release();
      held--;
      if (reading && call.isPaused() && held < WINDOW) call.resume();
      watchStall();
    };
    sending.add(done);
    call.write(bytes, done);
  };

  const write = (message: ModelInferRequest, outcome: Outcome) => {
    computing--;
    if (finished) {
      if ('answer' in outcome) outcome.answer.release();
      return;
    }
    const known = Object.hasOwn(MODELS, message.model_name) ? message.model_name : 'unknown';
    if ('answer' in outcome) {
      deps.countRequest(known, true);
      send(outcome.answer.response, outcome.answer.release);
    } else {
      deps.countRequest(known, false);
      if (outcome.failure.status.code === Status.INTERNAL) deps.log((outcome.failure.cause as Error) ?? outcome.failure, 'grpc stream request failed');
      if (failFast) return finish(outcome.failure.status.code, outcome.failure.status);
      send(encodeStreamError(outcome.failure.status.details, outcome.failure.id), () => {});
    }
    settle();
  };

  call.on('data', (message: ModelInferRequest) => {
    if (!reading) return;
    computing++;
    held++;
    if (held >= WINDOW) {
      call.pause();
      watchStall();
    }
    // held while the request works, so that a stream that stops drops its queued work
    let admitted: Admitted | null = null;
    const failed = (err: unknown): Outcome => ({ failure: err instanceof InferFailure ? err : new InferFailure(grpcStatus(serviceError('internal')), message.id) });
    let started: InferAnswer | Promise<InferAnswer> | Outcome;
    try {
      started = deps.infer(message, (a) => working.add((admitted = a)));
    } catch (err) {
      started = failed(err);
    }
    let outcome: Outcome | Promise<Outcome>;
    if (started instanceof Promise) {
      outcome = started.then((answer) => ({ answer }), failed).finally(() => admitted !== null && working.delete(admitted));
    } else {
      if (admitted !== null) working.delete(admitted);
      outcome = 'response' in started ? { answer: started } : started;
      // computed here and now with nothing read before it still to write: written at once, no promise
      if (computing === 1) return write(message, outcome);
    }
    // each answer waits for the ones before it
    const settled = outcome;
    tail = tail.then(() => settled).then((result) => write(message, result));
  });
  call.on('end', () => {
    // a client's cancel also ends the input, and 'cancelled' comes after: a half-close only if not
    setImmediate(() => {
      if (call.cancelled || finished) return;
      halfClosed = true;
      settle();
    });
  });
  // the client cancelled, or the connection went: unanswered work is dropped, held answers given back
  // (also after a graceful end whose last answers the client never took)
  for (const event of ['cancelled', 'close']) {
    call.on(event, () => {
      finish(Status.CANCELLED, undefined, true);
      dropSending();
    });
  }
  return {
    drain() {
      draining = true;
      reading = false;
      settle();
    },
  };
}
