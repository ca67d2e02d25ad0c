// the gRPC floor: a bare @grpc/grpc-js server on the service's two inference methods, answering each
// message with its own bytes (identity (de)serializers: nothing parsed, nothing encoded, nothing
// computed; on a stream, wrapped as a ModelStreamInferResponse's infer_response, as the service frames
// its answers). No grpc-js service can pay less to move the same bytes, so the service's gRPC CPU per
// request is judged against this. Prints `gRPC floor listening on <port>` once bound.
// Env: GRPC_PORT (0: a free one), HOST (127.0.0.1), MAX_BODY_BYTES.
import { Server, ServerCredentials, type ServerDuplexStream, type ServerUnaryCall, type sendUnaryData } from '@grpc/grpc-js';

const same = (bytes: Buffer) => bytes;
const method = (name: string, requestStream: boolean, responseStream: boolean) => ({
  path: `/inference.GRPCInferenceService/${name}`, requestStream, responseStream,
  requestSerialize: same, requestDeserialize: same, responseSerialize: same, responseDeserialize: same,
});

/** field 2 (infer_response), length-delimited: its tag and varint length */
function streamHead(length: number): Buffer {
  const head = [0x12];
  let n = length;
  for (; n >= 128; n = Math.floor(n / 128)) head.push((n % 128) | 128);
  head.push(n);
  return Buffer.from(head);
}

const server = new Server({
  'grpc.max_receive_message_length': Number(process.env.MAX_BODY_BYTES ?? 64 * 1024 * 1024),
  'grpc.max_send_message_length': -1,
  // as the service runs it (src/grpc/server.ts): no channelz
  'grpc.enable_channelz': 0,
});
server.addService({ ModelInfer: method('ModelInfer', false, false), ModelStreamInfer: method('ModelStreamInfer', true, true) }, {
  ModelInfer: (call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>) => callback(null, call.request),
  ModelStreamInfer: (call: ServerDuplexStream<Buffer, Buffer>) => {
    call.on('data', (message: Buffer) => call.write(Buffer.concat([streamHead(message.length), message])));
    call.on('end', () => call.end());
  },
});
server.bindAsync(`${process.env.HOST ?? '127.0.0.1'}:${process.env.GRPC_PORT ?? 0}`, ServerCredentials.createInsecure(), (err, port) => {
  if (err) throw err;
  process.stdout.write(`gRPC floor listening on ${port}\n`);
});
// a client that keeps its connection open would hold tryShutdown forever: a second at most
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    server.tryShutdown(() => process.exit(0));
    setTimeout(() => process.exit(0), 1_000).unref();
  });
}
