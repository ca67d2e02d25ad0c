// the gRPC load client (autocannon speaks HTTP/1.1 only): node:http2 sessions sending one pre-encoded
// message as gRPC frames, unary calls or one ModelStreamInfer stream per connection, either closed
// loop (each connection waits for its answer before sending again) or at a fixed overall rate paced
// every millisecond. Nothing is decoded but the frame lengths and grpc-status, so the client costs
// little beside the server it measures; its own CPU is reported.
import { connect, type ClientHttp2Session, type ClientHttp2Stream } from 'node:http2';
import { SLICE_MS } from './paced-http.js';

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
  /** the run's length; with `amount`, its bound */
  durationMs: number;
  /** send this many requests in all, and end once each is answered (short runs) */
  amount?: number;
  /** the call's metadata, e.g. authorization */
  metadata?: Record<string, string>;
  /** the connections to send on, left open after the run (`openGrpcSessions`: a run sliced beside
   *  other servers' keeps them from slice to slice, as load/paced-http.ts says why); by default
   *  `connections` of them made for this run and closed after it */
  sessions?: ClientHttp2Session[];
}

export interface GrpcLoadResult {
  /** answers that came back OK (a stream's in-place error answers count as errors) */
  ok: number;
  errors: number;
  /** grpc-status of calls that ended otherwise, by code */
  statuses: Record<string, number>;
  /** ms, one per OK answer */
  latencies: number[];
  /** the window: durationMs, or with `amount` until the last answer */
  elapsedMs: number;
  /** answers (any outcome), and OK ones, that came within the window: the rest came while it drained */
  windowAnswers: number;
  windowOk: number;
  /** paced runs: the 10 ms slices of the window in which an answer came (0 in a closed loop) */
  busySlices: number;
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

/** counts whole frames in a byte stream: calls `onMessage` per message with the chunk its header came
 *  in, where the message starts in it (at least its first byte is there) and its length */
function frameReader(onMessage: (bytes: Buffer, start: number, length: number) => void): (chunk: Buffer) => void {
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
        onMessage(data, at + 5, length);
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

const DRAIN_MS = 5_000; // after the window, answers still on their way are waited for this long

/** `count` HTTP/2 connections to `target` (host:port), each connected */
export async function openGrpcSessions(target: string, count: number): Promise<ClientHttp2Session[]> {
  const sessions: ClientHttp2Session[] = [];
  try {
    for (let i = 0; i < count; i++) {
      // HTTP/2's default 64 KiB receive window, as @grpc/grpc-js's client (a 16 MiB one saved large answers ~10 % of server CPU)
      const session = connect(`http://${target}`);
      sessions.push(session);
      await new Promise<void>((resolve, reject) => session.once('connect', () => resolve()).once('error', reject));
      session.on('error', () => {}); // a connection lost mid-run: its calls end, and are counted, as errors
    }
  } catch (err) {
    for (const session of sessions) session.destroy();
    throw err;
  }
  return sessions;
}

export async function runGrpcLoad(o: GrpcLoadOptions): Promise<GrpcLoadResult> {
  const frame = grpcFrame(o.message);
  const headers = { ':method': 'POST', ':path': PATH[o.mode], 'content-type': 'application/grpc', te: 'trailers', ...o.metadata };
  const result: GrpcLoadResult = { ok: 0, errors: 0, statuses: {}, latencies: [], elapsedMs: 0, windowAnswers: 0, windowOk: 0, busySlices: 0, clientCpuMs: 0 };
  const sessions = o.sessions ?? await openGrpcSessions(o.target, o.connections);
  const cpu0 = process.cpuUsage();
  const started = performance.now();
  const slices = o.rate === null ? null : new Set<number>();
  let running = true;
  let sent = 0;
  let answered = 0;
  let allAnswered = () => {};
  const status = (code: string) => { result.statuses[code] = (result.statuses[code] ?? 0) + 1; };
  const canSend = () => running && (o.amount === undefined || sent < o.amount);
  /** one answer in (or one call lost): counted, and in a closed loop the connection's next request
   *  sent (`next`: false for a call lost on a closed connection, which would only be lost again) */
  const answer = (sender: Sender, at: number | null, next = true) => {
    answered++;
    if (at === null) result.errors++;
    else {
      result.ok++;
      const now = performance.now();
      result.latencies.push(now - at);
      slices?.add(Math.floor((now - started) / SLICE_MS));
    }
    if (o.amount !== undefined && answered >= o.amount) allAnswered();
    if (next && o.rate === null && canSend()) sender.send();
  };

  // one sender per connection: send() starts a request
  type Sender = { send(): void; outstanding(): number; close(): void };
  const senders: Sender[] = sessions.map((session) => {
    if (o.mode === 'unary') {
      let outstanding = 0;
      const sender: Sender = {
        send() {
          sent++;
          // a kept connection the server has since closed: the call is lost, not thrown from the pacing timer
          if (session.closed || session.destroyed) {
            status('connection closed');
            answer(sender, null, false);
            return;
          }
          outstanding++;
          const at = performance.now();
          const call = session.request(headers);
          let code: string | undefined;
          call.on('response', (h) => { if (h['grpc-status'] !== undefined) code = String(h['grpc-status']); });
          call.on('trailers', (t) => { code = String(t['grpc-status']); });
          call.on('data', () => {});
          // a refused or reset stream: counted by its close, below
          call.on('error', () => { code ??= 'reset'; });
          call.on('close', () => {
            outstanding--;
            if (code !== '0') status(code ?? 'closed');
            answer(sender, code === '0' ? at : null);
          });
          call.end(frame);
        },
        outstanding: () => outstanding,
        close() {},
      };
      return sender;
    }
    const stream: ClientHttp2Stream = session.request(headers);
    const sentAt: number[] = [];
    let head = 0;
    let closed = false;
    stream.on('data', frameReader((bytes, start, length) => {
      const at = sentAt[head++];
      // a ModelStreamInferResponse that starts with field 1 carries an error_message: counted by its
      // start (what this chunk has of it), so a run says what failed
      if (length === 0 || bytes[start] !== 0x0a) return answer(sender, at);
      const text = start + (bytes[start + 1] < 128 ? 2 : 3); // after the tag and a length of one byte or two
      status(`in-stream: ${bytes.subarray(text, Math.min(text + 40, start + length)).toString()}`);
      answer(sender, null);
    }));
    stream.on('trailers', (t) => { if (t['grpc-status'] !== '0') status(String(t['grpc-status'])); });
    stream.on('error', () => {});
    // a stream that ended early: what it left unanswered is lost
    stream.on('close', () => {
      closed = true;
      if (running && stream.rstCode !== 0) status(`stream reset ${stream.rstCode}`);
      while (head < sentAt.length) { head++; answer(sender, null); }
    });
    const sender: Sender = {
      send() {
        sent++;
        if (closed) {
          status('stream closed');
          answer(sender, null);
          return;
        }
        sentAt.push(performance.now());
        stream.write(frame);
      },
      outstanding: () => sentAt.length - head,
      close: () => stream.end(),
    };
    return sender;
  });

  await new Promise<void>((resolve) => {
    const end = setTimeout(() => allAnswered(), o.durationMs);
    let tick: NodeJS.Timeout | undefined;
    allAnswered = () => {
      clearTimeout(end);
      clearInterval(tick);
      allAnswered = () => {};
      resolve();
    };
    if (o.rate === null) {
      for (const s of senders) if (canSend()) s.send();
      return;
    }
    // paced: each millisecond, the requests due by now (the k-th at k / rate s, the first at once, so a
    // window of T s offers T × rate), round-robin over the connections
    let next = 0;
    tick = setInterval(() => {
      const due = Math.floor(((performance.now() - started) / 1000) * o.rate!) + 1;
      while (sent < due && canSend()) {
        senders[next].send();
        next = (next + 1) % senders.length;
      }
    }, 1);
  });
  running = false;
  result.elapsedMs = performance.now() - started;
  result.windowAnswers = answered;
  result.windowOk = result.ok;
  // answers still on their way: wait for them, briefly
  const drainUntil = performance.now() + DRAIN_MS;
  while (senders.some((s) => s.outstanding() > 0) && performance.now() < drainUntil) await new Promise((r) => setTimeout(r, 5));
  const cpu = process.cpuUsage(cpu0);
  result.clientCpuMs = (cpu.user + cpu.system) / 1000;
  result.busySlices = slices?.size ?? 0;
  for (const s of senders) s.close();
  if (o.sessions === undefined) for (const session of sessions) session.close();
  return result;
}
