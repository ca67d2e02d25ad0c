// the mixed scenario (issue 23): the small requests measured alone, then straight after, on the same
// service process, again while other connections send 16 MiB bodies whose answers the service
// encodes as JSON (about 80 MB each). The service's event-loop delay over the mixed window and the
// small requests' p99 against their p99 alone say whether one request can hold the others up.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { LoopDelay } from './event-loop.js';
import { measure, spotCheck, startCannon, type Beside, type Endpoint } from './measure.js';
import type { Options } from './options.js';
import type { BackgroundFigures, MixedFigures } from './results.js';
import { makeSample, type Sample, type Scenario } from './scenarios.js';

const TIMED_OUT = 'request timed out'; // autocannon's error for its timeout
// the first large answer comes only after 8 uploads of 16 MiB and their JSON text: on a busy
// 2-CPU machine, seconds. Waited for at most this long before the window opens
const READY_MAX_MS = 30_000;

type Counts = Pick<BackgroundFigures, 'responses' | 'ok' | 'non2xx' | 'errors' | 'timeouts'>;

interface Background extends Beside {
  counts: Counts;
  /** resolves once autocannon has stopped and closed its connections */
  done: Promise<unknown>;
  loadgenLoop(): LoopDelay;
}

/**
 * the background's closed loop, started at once; it counts only what comes while the window is open.
 * Short mode: a fixed amount, and the window lasts until it is answered. Else: the window opens at
 * its first answer, when large requests are arriving, being computed and written as JSON all at
 * once, and lasts --duration, extended (up to 3 ×) until an answer has come within it; stopped at its end.
 */
function startBackground(url: string, bg: Scenario, sample: Sample, o: Options, fixed: boolean): Background {
  const counts: Counts = { responses: 0, ok: 0, non2xx: 0, errors: 0, timeouts: 0 };
  // bounded either way: a fixed amount in short mode, else longer than any window and stopped at its end
  const run = fixed ? { amount: bg.shortAmount } : { duration: o.warmup + 3 * o.duration + 30, prompt: true };
  const { instance, done } = startCannon(url, bg, sample, o, run);
  let open = false;
  let finished = false;
  const ended = done.finally(() => { finished = true; });
  let answered!: () => void;
  const firstAnswer = new Promise<void>((resolveAnswer) => { answered = resolveAnswer; });
  instance.on('response', (_client, status) => {
    answered();
    if (!open) return;
    counts.responses++;
    if (status >= 200 && status < 300) counts.ok++;
    else counts.non2xx++;
  });
  instance.on('reqError', (err) => {
    if (!open) return;
    counts.errors++;
    if (err.message === TIMED_OUT) counts.timeouts++;
  });
  // the generator's own loop at the service's resolution: a late generator would read as late answers
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  return {
    counts,
    done: ended.catch(() => undefined),
    async ready() {
      if (fixed) return;
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolveLate) => { timer = setTimeout(resolveLate, READY_MAX_MS); });
      await Promise.race([firstAnswer, ended.catch(() => undefined), late]);
      clearTimeout(timer);
    },
    open() {
      open = true;
      histogram.enable();
    },
    pending: () => (fixed ? !finished : !finished && counts.responses + counts.errors === 0),
    close() {
      open = false;
      histogram.disable();
      instance.stop();
    },
    loadgenLoop: () => ({ p50Ms: histogram.percentile(50) / 1e6, p99Ms: histogram.percentile(99) / 1e6, maxMs: histogram.max / 1e6 }),
  };
}

export async function measureMixed(service: Endpoint, s: Scenario, samples: Sample[], o: Options): Promise<MixedFigures> {
  const bg = s.beside!;
  const fixed = o.short && o.duration === 0;
  const alone = await measure(service, s, samples, o);
  const bgSample = makeSample(bg, 0);
  const bgUrl = `${service.base}${bg.path}`;
  const background = startBackground(bgUrl, bg, bgSample, o, fixed);
  const mixed = await measure(service, s, samples, o, background);
  await background.done;
  // one large JSON answer, decoded and compared with the float64 reference like every answer checked
  const failures = await spotCheck(bgUrl, [bgSample], 'service', o);
  return {
    id: s.id, op: s.op, label: s.label, path: s.path, connections: o.connections ?? s.connections,
    alone, mixed: { ...mixed, serverCpuPerReq: null },
    p50Ratio: mixed.p50Ms / alone.p50Ms, p99Ratio: mixed.p99Ms / alone.p99Ms,
    background: {
      label: bg.label, path: bg.path, answer: bg.answer, connections: o.connections ?? bg.connections, ...background.counts,
      spotChecks: 1, spotCheckFailures: failures.length, firstFailure: failures[0] ?? null,
    },
    loadgenLoop: background.loadgenLoop(),
  };
}
