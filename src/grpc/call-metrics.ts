// grpc_server_handled_total and grpc_server_handling_seconds, as grpc-ecosystem's Prometheus
// interceptors count them: one count per call at its final status, codes by their Go names
// ("OK", "InvalidArgument"), types "unary" and "bidi_stream".
import { status as Status } from '@grpc/grpc-js';
import type { Metrics } from '../metrics.js';

/** Go's codes.Code.String(), which the interceptors' dashboards expect */
const GO_NAMES: Readonly<Record<number, string>> = {
  [Status.OK]: 'OK', [Status.CANCELLED]: 'Canceled', [Status.UNKNOWN]: 'Unknown', [Status.INVALID_ARGUMENT]: 'InvalidArgument',
  [Status.DEADLINE_EXCEEDED]: 'DeadlineExceeded', [Status.NOT_FOUND]: 'NotFound', [Status.ALREADY_EXISTS]: 'AlreadyExists',
  [Status.PERMISSION_DENIED]: 'PermissionDenied', [Status.RESOURCE_EXHAUSTED]: 'ResourceExhausted',
  [Status.FAILED_PRECONDITION]: 'FailedPrecondition', [Status.ABORTED]: 'Aborted', [Status.OUT_OF_RANGE]: 'OutOfRange',
  [Status.UNIMPLEMENTED]: 'Unimplemented', [Status.INTERNAL]: 'Internal', [Status.UNAVAILABLE]: 'Unavailable',
  [Status.DATA_LOSS]: 'DataLoss', [Status.UNAUTHENTICATED]: 'Unauthenticated',
};

/** starts timing a call; the returned function counts it once, with its final code */
export type CallObserver = (service: string, method: string, type: 'unary' | 'bidi_stream') => (code: Status) => void;

export function observeCalls(metrics: Metrics): CallObserver {
  return (service, method, type) => {
    const started = performance.now();
    let counted = false;
    return (code) => {
      if (counted) return;
      counted = true;
      metrics.grpcHandled.cell(service, method, type, GO_NAMES[code] ?? String(code)).value++;
      metrics.grpcHandling.cell(service, method, type).observe((performance.now() - started) / 1000);
    };
  };
}
