// the mixed scenario (issue 23): the small requests measured alone, then straight after, on the same
// service process, again while other connections send 16 MiB bodies whose answers the service
// encodes as JSON (about 80 MB each). The service's event-loop delay over the mixed window and the
// small requests' p99 against their p99 alone say whether one request can hold the others up.
// The background runs in a child process (load/background-load.ts), so its answers do not delay the
// loop that times the small requests.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { BackgroundArgs, Command, Counts, Report } from './background-load.js';
import { measure, spotCheck, type Beside, type Endpoint } from './measure.js';
import { fixedAmount, type Options } from './options.js';
import type { MixedFigures } from './results.js';
import { makeSample, type Sample, type Scenario } from './scenarios.js';

const BACKGROUND_SCRIPT = fileURLToPath(new URL('./background-load.js', import.meta.url));
// the first large answer comes only after 8 uploads of 16 MiB and their JSON text: on a busy
// 2-CPU machine, seconds. Waited for at most this long before the window opens
const READY_MAX_MS = 30_000;

interface Background extends Beside {
  counts: Counts;
  /** resolves once the background has stopped and closed its connections */
  done: Promise<unknown>;
}

/**
 * the background's closed loop, started at once; it counts only what comes while the window is open.
 * Short mode: a fixed amount, and the window lasts until it is answered. Else: the window opens at
 * its first answer, when large requests are arriving, being computed and written as JSON all at
 * once, and lasts --duration, extended (up to 3 ×) until an answer has come within it; stopped at its end.
 */
function startBackground(url: string, bg: Scenario, o: Options, fixed: boolean): Background {
  const args: BackgroundArgs = { url, scenario: bg, options: o, fixed };
  const child = fork(BACKGROUND_SCRIPT, [JSON.stringify(args)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const background: Background = {
    counts: { responses: 0, ok: 0, non2xx: 0, errors: 0, timeouts: 0 },
    done: new Promise((resolveExit) => child.once('exit', resolveExit)),
    async ready() {
      if (fixed) return;
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolveLate) => { timer = setTimeout(resolveLate, READY_MAX_MS); });
      await Promise.race([firstAnswer, background.done, late]);
      clearTimeout(timer);
    },
    open: () => command('open'),
    pending: () => (fixed ? !finished : !finished && background.counts.responses + background.counts.errors === 0),
    close: () => command('close'),
  };
  let finished = false;
  let answered!: () => void;
  const firstAnswer = new Promise<void>((resolveAnswer) => { answered = resolveAnswer; });
  child.on('message', (report: Report) => {
    if (report.type === 'answered') answered();
    else background.counts = report.counts;
    if (report.type === 'finished') finished = true;
  });
  void background.done.then(() => { finished = true; });
  const command = (c: Command) => { if (child.connected) child.send(c); };
  return background;
}

export async function measureMixed(service: Endpoint, s: Scenario, samples: Sample[], o: Options): Promise<MixedFigures> {
  const bg = s.beside!;
  const fixed = fixedAmount(o);
  const alone = await measure(service, s, samples, o);
  const bgUrl = `${service.base}${bg.path}`;
  const background = startBackground(bgUrl, bg, o, fixed);
  // this process's own loop over the mixed window: a late generator would read as late answers
  const loop = monitorEventLoopDelay({ resolution: 10 });
  const mixed = await measure(service, s, samples, o, {
    beside: {
      ...background,
      open() { loop.enable(); background.open(); },
      close() { loop.disable(); background.close(); },
    },
  });
  await background.done;
  // one large JSON answer, decoded and compared with the float64 reference like every answer checked
  const failures = await spotCheck(bgUrl, [makeSample(bg, 0)], 'service', o);
  return {
    id: s.id, op: s.op, label: s.label, path: s.path, connections: o.connections ?? s.connections,
    alone, mixed: { ...mixed, serverCpuPerReq: null },
    p50Ratio: mixed.p50Ms / alone.p50Ms, p99Ratio: mixed.p99Ms / alone.p99Ms,
    background: {
      label: bg.label, path: bg.path, answer: bg.answer, connections: o.connections ?? bg.connections, ...background.counts,
      spotChecks: 1, spotCheckFailures: failures.length, firstFailure: failures[0] ?? null,
    },
    loadgenLoop: { p50Ms: loop.percentile(50) / 1e6, p99Ms: loop.percentile(99) / 1e6, maxMs: loop.max / 1e6 },
  };
}
