// the gRPC services' definitions, loaded once from the project's .proto files (proto/) with
// @grpc/proto-loader: field names kept as written (`raw_input_contents`), 64-bit integers as numbers
// (shapes and parameters), every field present (proto3 leaves defaults off the wire: an empty string
// is '', an unset message null), oneofs named (`parameter_choice`: which InferParameter choice was
// sent, and no default for the others).
import { loadSync, type MethodDefinition, type PackageDefinition } from '@grpc/proto-loader';
import type { ServiceDefinition } from '@grpc/grpc-js';
import { fileURLToPath } from 'node:url';
import { readInferRequest } from './infer-codec.js';

const PROTO_DIR = fileURLToPath(new URL('./proto/', import.meta.url));

export const INFERENCE_SERVICE = 'inference.GRPCInferenceService';
export const HEALTH_SERVICE = 'grpc.health.v1.Health';

/** both services in one package definition: what server reflection describes */
export const packageDefinition: PackageDefinition = loadSync(['inference.proto', 'health.proto'], {
  includeDirs: [PROTO_DIR],
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  arrays: true,
  oneofs: true,
});

type Methods = Record<string, MethodDefinition<object, object>>;

const inference = packageDefinition[INFERENCE_SERVICE] as unknown as Methods;

// inference messages are read and written by hand (grpc/infer-codec.ts); answers are encoded by the
// service while the request's shared memory is still held, so what the handlers hand grpc-js is bytes
const passBytes = (bytes: Buffer) => bytes;
const inferCodec = { requestDeserialize: readInferRequest, responseSerialize: passBytes };

export const inferenceService: ServiceDefinition = {
  ...inference,
  ModelInfer: { ...inference.ModelInfer, ...inferCodec },
  ModelStreamInfer: { ...inference.ModelStreamInfer, ...inferCodec },
} as unknown as ServiceDefinition;

export const healthService = packageDefinition[HEALTH_SERVICE] as unknown as ServiceDefinition;
