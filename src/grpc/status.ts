// the service's errors as gRPC statuses (OIP.md "Status codes"): each REST status has its code, the
// message names the field as REST's {"error"} does (in OIP's words), and a 503's UNAVAILABLE carries
// retry-after and grpc-retry-pushback-ms for clients' retry policies.
import { Metadata, status as Status, type StatusObject } from '@grpc/grpc-js';
import type { ServiceError } from '../errors.js';
import { oipMessage } from '../http/v2/datatypes.js';

const CODE_OF_STATUS: Readonly<Record<number, Status>> = {
  400: Status.INVALID_ARGUMENT,
  401: Status.UNAUTHENTICATED,
  404: Status.NOT_FOUND,
  503: Status.UNAVAILABLE,
  504: Status.DEADLINE_EXCEEDED,
};

/** seconds a refused caller should wait (REST's Retry-After) */
const RETRY_AFTER_S = 1;

export type GrpcStatus = Partial<StatusObject> & { code: Status; details: string };

/** a failure as a call's status; `shapes`: the request's input shapes, for messages in OIP's words */
export function grpcStatus(err: ServiceError, shapes: Readonly<Record<string, number[]>> = {}): GrpcStatus {
  const code = CODE_OF_STATUS[err.statusCode] ?? Status.INTERNAL;
  const metadata = new Metadata();
  if (code === Status.UNAVAILABLE) {
    metadata.set('retry-after', String(RETRY_AFTER_S));
    metadata.set('grpc-retry-pushback-ms', String(RETRY_AFTER_S * 1000));
  }
  const details = err.statusCode === 400 ? oipMessage(err.message, shapes) : err.message;
  return { code, details, metadata };
}
