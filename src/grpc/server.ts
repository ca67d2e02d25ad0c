// the gRPC front end (OIP.md "gRPC"): inference.GRPCInferenceService and grpc.health.v1.Health/Check
// over @grpc/grpc-js on GRPC_PORT, plus server reflection; every call goes to the same engine as the
// HTTP dialects (admission, memory budget, cancellation, auth, metrics, drain and readiness).
import { Metadata, Server, ServerCredentials, status as Status, type ServerUnaryCall, type sendUnaryData, type UntypedServiceImplementation } from '@grpc/grpc-js';
import { ReflectionService } from '@grpc/reflection';
import { readFileSync } from 'node:fs';
import type { Config } from '../config.js';
import type { Engine } from '../engine/engine.js';
import { isServiceError, serviceError } from '../errors.js';
import { faultNamed, serverTiming } from '../http/request-context.js';
import { compileOpValidators } from '../http/v1/schemas.js';
import { EXTENSIONS, modelFor, modelMetadata, PLATFORM } from '../http/v2/models.js';
import type { TaskFault } from '../pool/protocol.js';
import { HEALTH_SERVICE, healthService, INFERENCE_SERVICE, inferenceService, packageDefinition } from './definitions.js';
import { NeverIndexedMetadata } from './never-indexed.js';
import { infer, InferFailure, type InferAnswer, type InferContext } from './infer.js';
import type { ModelInferRequest } from './infer-request.js';
import { grpcStatus, type GrpcStatus } from './status.js';
import { observeCalls } from './call-metrics.js';
import { serveStream } from './stream.js';

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
// a value that differs on every answer: never indexed (grpc/never-indexed.ts)
const TIMING_TRAILER = ['server-timing'];

/** what one HTTP/2 connection may have open at once; with MAX_BODY_BYTES it bounds what messages
 *  still arriving on a connection can hold (docs/api.md, "gRPC") */
export const MAX_CONCURRENT_STREAMS = 32;

export interface GrpcFrontEnd {
  readonly port: number;
  /** OIP.md "Draining": open streams answer what they have read and end UNAVAILABLE; resolves once
   *  every call has ended */
  drain(): Promise<void>;
  /** ends every call at once */
  close(): void;
}

export type GrpcLog = (err: Error, message: string) => void;

export async function startGrpc(engine: Engine, config: Readonly<Config>, log: GrpcLog): Promise<GrpcFrontEnd> {
  const server = new Server({
    'grpc.max_receive_message_length': config.maxBodyBytes,
    'grpc.max_send_message_length': -1,
    'grpc.max_concurrent_streams': MAX_CONCURRENT_STREAMS,
    // a silent peer is found and its connection closed within keepalive time + timeout
    'grpc.keepalive_time_ms': 60_000,
    'grpc.keepalive_timeout_ms': 20_000,
    // channelz (grpc-js's call and message counters, with a Date made for each call's start) is
    // read only through its own gRPC service, which this server does not offer. Off, a small unary
    // call cost the bare grpc-js floor (load/grpc-floor-server.ts) ~10 % less CPU, the service ~4 %
    'grpc.enable_channelz': 0,
  });
  const observe = observeCalls(engine.metrics);
  const validators = compileOpValidators();
  const streams = new Set<{ drain(): void }>();

  const authorized = (metadata: Metadata) => {
    if (engine.checkKey === null) return true;
    const value = metadata.get('authorization')[0];
    return engine.checkKey(typeof value === 'string' ? value : undefined);
  };
  /** tests only (faultInjection): `x-test-fault` metadata for a call, or a stream request's id
   *  `x-test-fault=hold`, as REST's X-Test-Fault header */
  const fault = (metadata: Metadata, id = ''): TaskFault | null => {
    if (!config.faultInjection) return null;
    return faultNamed(id.startsWith('x-test-fault=') ? id.slice('x-test-fault='.length) : metadata.get('x-test-fault')[0]);
  };
  /** the call's deadline in ms from now, at most REQUEST_TIMEOUT_MS */
  const timeoutOf = (deadline: Date | number) => {
    const at = deadline instanceof Date ? deadline.getTime() : deadline;
    return Math.max(1, Math.min(config.requestTimeoutMs, at - Date.now()));
  };

  /** a unary method: `answer` gives the response or throws a service error; `open` methods need no key */
  const unary = <Req, Res>(method: string, answer: (request: Req, call: ServerUnaryCall<Req, Res>) => Res | Promise<Res>, open = false, service = INFERENCE_SERVICE) =>
    (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>) => {
      const done = observe(service, method, 'unary');
      const fail = (err: unknown) => {
        const status = grpcStatus(isServiceError(err) ? err : serviceError('internal'));
        if (status.code === Status.INTERNAL) log(err as Error, `grpc ${method} failed`);
        done(status.code);
        callback(status);
      };
      if (!open && !authorized(call.metadata)) return fail(serviceError('unauthorizedGrpc'));
      try {
        const result = answer(call.request, call);
        if (!(result instanceof Promise)) {
          done(Status.OK);
          return callback(null, result);
        }
        result.then((value) => {
          done(Status.OK);
          callback(null, value);
        }, fail);
      } catch (err) {
        fail(err);
      }
    };

  const inferContext = (metadata: Metadata, id: string, timeoutMs: number, stream: boolean, onAdmitted: InferContext['admitted']): InferContext =>
    ({ engine, validators, timeoutMs, fault: fault(metadata, id), stream, admitted: onAdmitted });

  const inferenceHandlers: UntypedServiceImplementation = {
    ServerLive: unary('ServerLive', () => ({ live: true }), true),
    ServerReady: unary('ServerReady', () => ({ ready: engine.readiness().ready }), true),
    ServerMetadata: unary('ServerMetadata', () => ({ name: PLATFORM, version, extensions: EXTENSIONS })),
    ModelMetadata: unary('ModelMetadata', ({ name, version: asked }: { name: string; version: string }) => modelMetadata(name, modelFor(name, asked || undefined))),
    ModelReady: unary('ModelReady', ({ name, version: asked }: { name: string; version: string }) => {
      modelFor(name, asked || undefined);
      return { ready: true };
    }),
    ModelInfer: (call: ServerUnaryCall<ModelInferRequest, Buffer>, callback: sendUnaryData<Buffer>) => {
      const done = observe(INFERENCE_SERVICE, 'ModelInfer', 'unary');
      const fail = (status: GrpcStatus) => {
        done(status.code);
        callback(status);
      };
      if (!authorized(call.metadata)) return fail(grpcStatus(serviceError('unauthorizedGrpc')));
      const ctx = inferContext(call.metadata, call.request.id, timeoutOf(call.getDeadline()), false, (admitted) => {
        // the client cancelled, or grpc-js ended the call at its deadline: queued work is dropped
        call.once('cancelled', () => admitted.end(false));
      });
      const answered = ({ response, timings, release }: InferAnswer) => {
        done(call.cancelled ? Status.CANCELLED : Status.OK);
        const trailer = new NeverIndexedMetadata(TIMING_TRAILER);
        trailer.set('server-timing', serverTiming(timings));
        try {
          // grpc-js copies the message into its frame before this returns: the slab may go
          callback(null, response, trailer);
        } finally {
          release();
        }
      };
      const failed = (err: InferFailure) => {
        if (err.status.code === Status.INTERNAL) log((err.cause as Error) ?? err, 'grpc ModelInfer failed');
        // the client's own cancel (or deadline, which grpc-js has already answered) dropped the work
        if (call.cancelled) done(timeoutOf(call.getDeadline()) <= 1 ? Status.DEADLINE_EXCEEDED : Status.CANCELLED);
        fail(err.status);
      };
      // answered at once when the pipeline ran inline: no promise, no microtask
      let answer: InferAnswer | Promise<InferAnswer>;
      try {
        answer = infer(ctx, call.request);
      } catch (err) {
        return failed(err as InferFailure);
      }
      if (answer instanceof Promise) answer.then(answered, failed);
      else answered(answer);
    },
    ModelStreamInfer: (call: Parameters<typeof serveStream>[0]) => {
      const done = observe(INFERENCE_SERVICE, 'ModelStreamInfer', 'bidi_stream');
      if (!authorized(call.metadata)) {
        done(Status.UNAUTHENTICATED);
        return call.emit('error', grpcStatus(serviceError('unauthorizedGrpc')));
      }
      if (engine.state.draining) {
        done(Status.UNAVAILABLE);
        return call.emit('error', grpcStatus(serviceError('shuttingDown')));
      }
      const stream = serveStream(call, {
        infer: (message, onAdmitted) => infer(inferContext(call.metadata, message.id, config.requestTimeoutMs, true, onAdmitted), message),
        countRequest: (model, ok) => engine.metrics.streamRequests.cell(model, ok ? 'ok' : 'error').value++,
        stallMs: config.requestTimeoutMs,
        ended: (code) => {
          streams.delete(stream);
          done(code);
        },
        log,
      });
      streams.add(stream);
    },
  };
  server.addService(inferenceService, inferenceHandlers);
  server.addService(healthService, {
    Check: unary('Check', ({ service }: { service: string }) => {
      if (service !== '' && service !== INFERENCE_SERVICE) throw serviceError('healthServiceUnknown', service.slice(0, 64), INFERENCE_SERVICE);
      return { status: engine.readiness().ready ? 'SERVING' : 'NOT_SERVING' };
    }, true, HEALTH_SERVICE),
  });
  new ReflectionService(packageDefinition).addToServer(server);

  const port = await new Promise<number>((resolve, reject) => {
    const host = config.host.includes(':') ? `[${config.host}]` : config.host;
    server.bindAsync(`${host}:${config.grpcPort ?? 0}`, ServerCredentials.createInsecure(), (err, bound) => (err ? reject(err) : resolve(bound)));
  });
  return {
    port,
    drain: () => new Promise<void>((resolve) => {
      for (const stream of streams) stream.drain();
      server.tryShutdown(() => resolve());
    }),
    close: () => server.forceShutdown(),
  };
}
