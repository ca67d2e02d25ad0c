// a busy host (issue 23): the real server with WORKERS=1 beside CPU hogs, twice as many as the cores.
// Below the admission limits every answer is a correct 200 however late the event loop runs; past
// them (MAX_QUEUE=4, 64 connections of 512 KiB bodies while the fault gate holds the admitted work)
// every other request gets 503 + Retry-After and nothing else, the refused hold no memory, and the
// server is ready after. Each step waits for what the server reports (its /metrics gauges and
// counters, its log, the fault gate), never for time. Vitest runs this folder alone, after every
// other file (vitest.config.ts), so the hogs starve no other test.
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  logged, parseMetrics, sampleValue, startServer, waitFor, type Sample, type ServerProcess,
} from '../service/helpers.js';
import { cpuSeconds } from '../../load/processes.js';
import { startHogs, type Hogs } from './hogs.js';
import { answerChecker, Client, MEDIUM_RMSNORM, MIX, SMALL_LAYERNORM, SMALL_RMSNORM } from './mix.js';

const HOGS = 2 * availableParallelism();
const FAULT_SERVER = fileURLToPath(new URL('./fault-server.mjs', import.meta.url));
const MiB = 1024 * 1024;
// bounds for a start and for a wait on the server's report, generous on a host this busy: they only
// end a wedged run, nothing is measured by them
const START_MS = 60_000;
const WAIT_MS = 120_000;

let hogs: Hogs | undefined;
let server: ServerProcess | undefined;
let client: Client | undefined;
beforeAll(async () => {
  hogs = await startHogs(HOGS);
});
afterAll(() => hogs?.kill());
afterEach(() => {
  client?.close();
  client = undefined;
  server?.kill();
  server = undefined;
});

async function scrape(url: string): Promise<Sample[]> {
  const res = await fetch(`${url}/metrics`);
  expect(res.status).toBe(200);
  return parseMetrics(await res.text());
}

/** the admission and memory gauges (API.md §7) */
async function gauges(url: string) {
  const samples = await scrape(url);
  const read = (name: string) => sampleValue(samples, name) ?? NaN;
  return {
    working: read('norm_requests_working'),
    receiving: read('norm_requests_receiving'),
    inUse: read('norm_tensor_memory_in_use_bytes'),
    limit: read('norm_tensor_memory_limit_bytes'),
  };
}

const equal = (a: object, b: object) => JSON.stringify(a) === JSON.stringify(b);

/** the server's own count of its /v1 answers, by status */
async function answeredByStatus(url: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const s of await scrape(url)) {
    if (s.name === 'http_requests_total' && s.labels.route.startsWith('/v1/')) counts[s.labels.status] = (counts[s.labels.status] ?? 0) + s.value;
  }
  return counts;
}

describe(`beside ${HOGS} CPU hogs (node -e busy loops)`, () => {
  const CONNECTIONS = 32;
  const PER_CONNECTION = 12;
  const TOTAL = CONNECTIONS * PER_CONNECTION;

  it(`WORKERS=1 as npm start starts it, a closed loop of ${CONNECTIONS} connections × ${PER_CONNECTION} requests of the docker/load.mjs mix: all ${TOTAL} correct 200s`, async () => {
    server = await startServer({ WORKERS: '1' }, START_MS);
    const { pid, port, url } = server;
    client = new Client(port, CONNECTIONS);
    const check = answerChecker();
    const cpuBefore = { hogs: hogs!.cpuSeconds(), server: cpuSeconds(pid) };
    const statuses: Record<string, number> = {};
    const problems = new Map<string, number>();
    await Promise.all(Array.from({ length: CONNECTIONS }, async (_, c) => {
      for (let i = 0; i < PER_CONNECTION; i++) {
        const req = MIX[(c + i) % MIX.length];
        const answer = await client!.send(req).catch(() => null); // kept in client.errors
        if (answer === null) continue;
        statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
        const problem = check(req, answer);
        if (problem !== null) problems.set(problem, (problems.get(problem) ?? 0) + 1);
      }
    }));
    console.log(
      `contention, below the limits: ${JSON.stringify(statuses)} over ${client.sockets.size} connections, `
      + `${client.errors.length} errors; CPU s during the run: hogs ${(hogs!.cpuSeconds() - cpuBefore.hogs).toFixed(1)}, `
      + `server ${(cpuSeconds(pid) - cpuBefore.server).toFixed(1)}`,
    );
    expect(client.errors.map(String)).toEqual([]);
    expect(Object.fromEntries(problems)).toEqual({});
    expect(statuses).toEqual({ 200: TOTAL });
    expect(client.sockets.size).toBe(CONNECTIONS);
    expect(await answeredByStatus(url)).toEqual({ 200: TOTAL });
  }, 600_000);

  const MAX_QUEUE = 4;
  const SLOTS = MAX_QUEUE + 1; // + WORKERS
  const OVERLOAD = 64;
  const TENSOR_MEMORY_BYTES = 64 * MiB;
  const OVERLOADED = { statusCode: 503, code: 'NORM_ERR_OVERLOADED', error: 'Service Unavailable', message: 'too many requests in flight; retry later' };

  it(`MAX_QUEUE=${MAX_QUEUE}, ${OVERLOAD} connections of 512 KiB bodies while the gate holds the ${SLOTS} admitted: ${OVERLOAD - SLOTS} × 503 + Retry-After and nothing else, no memory for them, ready after`, async () => {
    // the deadline far beyond any run, so that how slow the host is never decides an answer
    server = await startServer({
      WORKERS: '1', MAX_QUEUE: String(MAX_QUEUE), MAX_TENSOR_MEMORY_BYTES: String(TENSOR_MEMORY_BYTES), REQUEST_TIMEOUT_MS: '3600000',
    }, START_MS, FAULT_SERVER);
    const { pid, port, url, lines } = server;
    const idle = await gauges(url);
    expect(idle).toEqual({ working: 0, receiving: 0, inUse: 0, limit: TENSOR_MEMORY_BYTES });
    client = new Client(port, OVERLOAD);
    const check = answerChecker();

    const held = Array.from({ length: SLOTS }, () => client!.send(MEDIUM_RMSNORM, { 'x-test-fault': 'hold' }));
    await waitFor('a task at the gate', () => logged(lines, 'gate held').length > 0, WAIT_MS);
    const full = await waitFor(`${SLOTS} requests holding the work slots`, async () => {
      const g = await gauges(url);
      return g.working === SLOTS && g.receiving === 0 && g;
    }, WAIT_MS);
    // each admitted request holds at least its input tensor; all of it within the budget
    expect(full.inUse).toBeGreaterThanOrEqual(SLOTS * MEDIUM_RMSNORM.expected.length * Float32Array.BYTES_PER_ELEMENT);
    expect(full.inUse).toBeLessThanOrEqual(TENSOR_MEMORY_BYTES);

    // every slot is taken and stays taken: each of the rest must be refused, whatever the timing
    const refused = await Promise.all(Array.from({ length: OVERLOAD - SLOTS }, () => client!.send(MEDIUM_RMSNORM)));
    expect(client.sockets.size).toBe(OVERLOAD);
    expect(client.errors.map(String)).toEqual([]);
    const refusals = refused.map(({ status, headers, text }) => ({
      status, retryAfter: /^\d+$/.test(String(headers['retry-after'])), requestId: typeof headers['x-request-id'], body: JSON.parse(text) as unknown,
    }));
    expect(refusals).toEqual(Array(OVERLOAD - SLOTS).fill({ status: 503, retryAfter: true, requestId: 'string', body: OVERLOADED }));
    // the refused were turned away before their bodies were read: no memory, no slot
    expect(await gauges(url)).toEqual(full);

    process.kill(pid, 'SIGUSR2'); // the gate opens
    const answers = await Promise.all(held);
    expect(answers.map((a) => check(MEDIUM_RMSNORM, a))).toEqual(Array(SLOTS).fill(null));
    expect(logged(lines, 'gate open')).toHaveLength(1);
    await waitFor('every slot and byte given back', async () => equal(await gauges(url), idle), WAIT_MS);
    expect(await answeredByStatus(url)).toEqual({ 200: SLOTS, 503: OVERLOAD - SLOTS });
    expect(client.errors.map(String)).toEqual([]);

    // ready, and an ordinary request of each kind answered correctly
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    for (const req of [SMALL_RMSNORM, SMALL_LAYERNORM, MEDIUM_RMSNORM]) expect(check(req, await client.send(req))).toBeNull();
    await waitFor('every slot and byte given back again', async () => equal(await gauges(url), idle), WAIT_MS);
  }, 600_000);
});
