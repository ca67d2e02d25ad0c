// the gRPC load client (autocannon speaks HTTP/1.1 only): node:http2 sessions sending one pre-encoded
// message as gRPC frames, unary calls or one ModelStreamInfer stream per connection, either closed
// loop (each connection waits for its answer before sending again) or at a fixed overall rate paced
// every millisecond. Nothing is decoded but the frame lengths and grpc-status, so the client costs
// little beside the server it measures; its own CPU is reported.
import { connect, type ClientHttp2Session, type ClientHttp2Stream } from 'node:http2';

export type GrpcMode = 'unary' | 'stream';

export interface GrpcLoadOptions {
  /** host:port */
  target: string;
  mode: GrpcMode;
  /** an encoded ModelInferRequest */
  message: Buffer;
  /** HTTP/2 connections (unary) or streams, each on its own connection (stream) */
  connections: number;
  /** overall requests per second; null: closed loop */
  rate: number | null;
  durationMs: number;
  /** the call's metadata, e.g. authorization */
  metadata?: Record<string, string>;
}

export interface GrpcLoadResult {
  /** answers that came back OK (a stream's in-place error answers count as errors) */
  ok: number;
  errors: number;
  /** grpc-status of calls that ended otherwise, by code */
  statuses: Record<string, number>;
  /** ms, one per OK answer */
  latencies: number[];
  elapsedMs: number;
  /** the client's own user + system CPU time over the run */
  clientCpuMs: number;
}

const PATH = { unary: '/inference.GRPCInferenceService/ModelInfer', stream: '/inference.GRPCInferenceService/ModelStreamInfer' };

/** the message as one gRPC frame: uncompressed flag, big-endian length, the bytes */
export function grpcFrame(message: Buffer): Buffer {
  const frame = Buffer.allocUnsafe(5 + message.length);
  frame[0] = 0;
  frame.writeUInt32BE(message.length, 1);
  message.copy(frame, 5);
  return frame;
}

/** counts whole frames in a byte stream: calls `onMessage(firstByte)` per message */
function frameReader(onMessage: (first: number) => void): (chunk: Buffer) => void {
  let pending: Buffer | null = null;
  let need = -1; // bytes of the current message still to skip, -1 while reading a header
  return (chunk) => {
    let data = pending === null ? chunk : Buffer.concat([pending, chunk]);
    pending = null;
    let at = 0;
    for (;;) {
      if (need < 0) {
        if (data.length - at < 6) {
          if (data.length > at) pending = data.subarray(at);
          return;
        }
        const length = data.readUInt32BE(at + 1);
        onMessage(length === 0 ? -1 : data[at + 5]);
        at += 5;
        need = length;
      }
      const skip = Math.min(need, data.length - at);
      at += skip;
      need -= skip;
      if (need > 0) return;
      need = -1;
      if (at === data.length) return;
      data = data.subarray(at);
      at = 0;
    }
  };
}

export async function runGrpcLoad(o: GrpcLoadOptions): Promise<GrpcLoadResult> {
  const frame = grpcFrame(o.message);
  const headers = { ':method': 'POST', ':path': PATH[o.mode], 'content-type': 'application/grpc', te: 'trailers', ...o.metadata };
  const result: GrpcLoadResult = { ok: 0, errors: 0, statuses: {}, latencies: [], elapsedMs: 0, clientCpuMs: 0 };
  const sessions: ClientHttp2Session[] = [];
  for (let i = 0; i < o.connections; i++) {
    const session = connect(`http://${o.target}`);
    session.on('error', () => {});
    await new Promise<void>((resolve, reject) => session.once('connect', () => resolve()).once('error', reject));
    sessions.push(session);
  }
  const cpu0 = process.cpuUsage();
  const started = performance.now();
  const endAt = started + o.durationMs;
  let running = true;
  const status = (code: string) => { result.statuses[code] = (result.statuses[code] ?? 0) + 1; };

  // one sender per connection: send() starts a request; `answered` runs when its answer is in
  type Sender = { send(): void; outstanding(): number; close(): void };
  const senders: Sender[] = sessions.map((session) => {
    if (o.mode === 'unary') {
      let outstanding = 0;
      return {
        send() {
          outstanding++;
          const sent = performance.now();
          const call = session.request(headers);
          let code: string | undefined;
          call.on('response', (h) => { if (h['grpc-status'] !== undefined) code = String(h['grpc-status']); });
          call.on('trailers', (t) => { code = String(t['grpc-status']); });
          call.on('data', () => {});
          // a refused or reset stream: counted by its close, below
          call.on('error', () => { code ??= 'reset'; });
          call.on('close', () => {
            outstanding--;
            if (code === '0') {
              result.ok++;
              result.latencies.push(performance.now() - sent);
            } else {
              result.errors++;
              status(code ?? 'closed');
            }
            if (running && o.rate === null) this.send();
          });
          call.end(frame);
        },
        outstanding: () => outstanding,
        close() {},
      };
    }
    const stream: ClientHttp2Stream = session.request(headers);
    const sentAt: number[] = [];
    let head = 0;
    stream.on('data', frameReader((first) => {
      const sent = sentAt[head++];
      // a ModelStreamInferResponse that starts with field 1 carries an error_message
      if (first === 0x0a) result.errors++;
      else {
        result.ok++;
        result.latencies.push(performance.now() - sent);
      }
      if (running && o.rate === null) sender.send();
    }));
    stream.on('trailers', (t) => { if (t['grpc-status'] !== '0') status(String(t['grpc-status'])); });
    stream.on('error', () => {});
    const sender: Sender = {
      send() {
        sentAt.push(performance.now());
        stream.write(frame);
      },
      outstanding: () => sentAt.length - head,
      close: () => stream.end(),
    };
    return sender;
  });

  await new Promise<void>((resolve) => {
    if (o.rate === null) {
      for (const s of senders) s.send();
      setTimeout(resolve, o.durationMs);
      return;
    }
    // paced: each millisecond, the requests due by now, round-robin over the connections
    let sent = 0;
    let next = 0;
    const tick = setInterval(() => {
      const now = performance.now();
      if (now >= endAt) {
        clearInterval(tick);
        resolve();
        return;
      }
      const due = Math.floor(((now - started) / 1000) * o.rate!);
      for (; sent < due; sent++) {
        senders[next].send();
        next = (next + 1) % senders.length;
      }
    }, 1);
  });
  running = false;
  result.elapsedMs = performance.now() - started;
  // answers still on their way: wait for them, briefly
  const drainUntil = performance.now() + 5_000;
  while (senders.some((s) => s.outstanding() > 0) && performance.now() < drainUntil) await new Promise((r) => setTimeout(r, 5));
  const cpu = process.cpuUsage(cpu0);
  result.clientCpuMs = (cpu.user + cpu.system) / 1000;
  for (const s of senders) s.close();
  for (const session of sessions) session.close();
  return result;
}
