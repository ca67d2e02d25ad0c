// a JSON answer's text: the dialect's JSON with each tensor's numbers left as a NumberList. A list of
// a few values is written here; a long one by the workers into a slab of the request's (TextTask), and
// the answer then goes out as pieces of that slab, in order: the main thread never formats nor joins
// millions of numbers (a 1024×4096 answer would hold the event loop for most of a second).
import { MAX_NUMBER_CHARS, numberText } from '../codec/number-text.js';
import type { Cancellation } from '../engine/cancellation.js';
import type { Lease } from '../memory/lease.js';
import type { Slab, TensorMemory } from '../memory/tensor-memory.js';
import type { NonFinite, NumberSource, Region, TextTask } from '../pool/protocol.js';
import { COST, openJobSlab, regionOf } from './job.js';
import { jobsDone, runJobs, type RunContext, type Runnable } from './run.js';

export interface NumberList {
  numbers: NumberSource;
  nonFinite: NonFinite;
}

/** JSON text, bytes (an OIP answer's binary outputs), or a tensor's numbers as list items */
export type AnswerPart = string | Buffer | NumberList;

/** an answer body: one string or buffer, or pieces sent one after the other */
export type Payload = Buffer | string | Buffer[];

/** values per block of text: each task writes whole blocks; small enough that a block's string is cheap */
const BLOCK_VALUES = 4096;

/** lists this short are written here, whatever INLINE_MAX_ELEMENTS says: ~0.2 ms, about a hop to a
 *  worker (COST.text); a longer one is a job, which runJobs sends to the pool unless told otherwise */
const INLINE_VALUES = 1024;

interface TextJob extends Runnable {
  slab: Slab;
  text: Region;
  spans: Region;
  blocks: number;
}

export type TextContext = Omit<RunContext, 'cancellation' | 'fault'> & { slabs: TensorMemory };

/** the parts as one payload: numbers written inline when few (then at once, no promise), else by the
 *  workers (a 504 if the request is dropped meanwhile) */
export function writeAnswerText(parts: AnswerPart[], ctx: TextContext, req: { lease: Lease; cancellation: Cancellation }): Payload | Promise<Payload> {
  const jobs: TextJob[] = [];
  const written = parts.map((part): string | Buffer | TextJob => {
    if (typeof part === 'string' || Buffer.isBuffer(part)) return part;
    if (part.numbers.length <= INLINE_VALUES) {
      return numberText(part.numbers, 0, part.numbers.length, part.nonFinite);
    }
    const job = textJob(part, ctx.slabs, ctx.pool.workers);
    req.lease.add(job.slab);
    jobs.push(job);
    return job;
  });
  if (jobs.length === 0) return joined(written as (string | Buffer)[]);
  // faults are for the normalization's tasks: the tests hold those, not these
  const { pool, limits, metrics, wasm } = ctx;
  return jobsDone(runJobs(jobs, { pool, limits, metrics, wasm, cancellation: req.cancellation, fault: null }), req.lease).then(() => pieces(written));
}

/** a slab for a list's text at worst-case length, its spans, and the one phase that writes it */
function textJob(list: NumberList, slabs: TensorMemory, maxTasks: number): TextJob {
  const count = list.numbers.length;
  const blocks = Math.ceil(count / BLOCK_VALUES);
  // the cancel flags, the spans, the text
  const laid = openJobSlab(slabs, [4 * maxTasks, 8 * blocks, count * MAX_NUMBER_CHARS], null, 0, 0);
  const { slab } = laid;
  const text = regionOf(laid, 2, count * MAX_NUMBER_CHARS);
  const spans = regionOf(laid, 1, 2 * blocks);
  const task: TextTask = {
    kind: 'text', blockStart: 0, blockEnd: blocks, blockValues: BLOCK_VALUES, values: list.numbers, nonFinite: list.nonFinite,
    text, spans, cancel: regionOf(laid, 0, maxTasks), slot: 0, fault: null,
  };
  return { slab, text, spans, blocks, phases: [{ task, units: blocks, elementsPerUnit: BLOCK_VALUES, cost: COST.text }], afterPhase: null };
}

/** small answers: one string (or, with binary outputs, one buffer), as before any text went to the pool */
function joined(parts: (string | Buffer)[]): string | Buffer {
  if (parts.every((p) => typeof p === 'string')) return parts.join('');
  return Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : p)));
}

/** every part as bytes, in order: a text job's blocks as the runs of its slab they fill */
function pieces(parts: (string | Buffer | TextJob)[]): Buffer[] {
  const out: Buffer[] = [];
  let text = '';
  for (const part of parts) {
    if (typeof part === 'string') {
      text += part;
      continue;
    }
    if (text !== '') out.push(Buffer.from(text));
    text = '';
    if (Buffer.isBuffer(part)) out.push(part);
    else out.push(...filledRuns(part));
  }
  if (text !== '') out.push(Buffer.from(text));
  return out;
}

/** each task wrote its blocks one after another, so adjacent blocks usually make one run */
function filledRuns(job: TextJob): Buffer[] {
  const spans = new Uint32Array(job.spans.memory, job.spans.byteOffset, job.spans.length);
  const runs: Buffer[] = [];
  let start = spans[0];
  for (let b = 1; b <= job.blocks; b++) {
    if (b < job.blocks && spans[2 * b] === spans[2 * b - 1]) continue;
    runs.push(Buffer.from(job.text.memory, job.text.byteOffset + start, spans[2 * b - 1] - start));
    if (b < job.blocks) start = spans[2 * b];
  }
  return runs;
}
