// the mixed scenario's background load (load/mixed.ts) in a process of its own: its answers, about
// 80 MB of JSON each, would otherwise arrive on the loop that times the small requests, and a late
// generator reads as a late server. Talks to load/mixed.ts over the fork's IPC channel.
import { startCannon } from './measure.js';
import type { Options } from './options.js';
import { makeSample, type Scenario } from './scenarios.js';

const TIMED_OUT = 'request timed out'; // autocannon's error for its timeout

export interface BackgroundArgs { url: string; scenario: Scenario; options: Options; fixed: boolean }

export interface Counts { responses: number; ok: number; non2xx: number; errors: number; timeouts: number }

/** parent → child */
export type Command = 'open' | 'close';
/** child → parent: the first answer (the window may open), the counts while it is open, the end */
export type Report = { type: 'answered' } | { type: 'counts'; counts: Counts } | { type: 'finished'; counts: Counts };

const send = (report: Report) => process.send!(report);

function main(args: BackgroundArgs): void {
  const { url, scenario, options: o, fixed } = args;
  const counts: Counts = { responses: 0, ok: 0, non2xx: 0, errors: 0, timeouts: 0 };
  // bounded either way: a fixed amount in short mode, else longer than any window and stopped at its end
  const run = fixed ? { amount: scenario.shortAmount } : { duration: o.warmup + 3 * o.duration + 30, prompt: true };
  const { instance, done } = startCannon(url, scenario, makeSample(scenario, 0), o, run);
  let open = false;
  let answered = false;
  instance.on('response', (_client, status) => {
    if (!answered) send({ type: 'answered' });
    answered = true;
    if (!open) return;
    counts.responses++;
    if (status >= 200 && status < 300) counts.ok++;
    else counts.non2xx++;
    send({ type: 'counts', counts });
  });
  instance.on('reqError', (err) => {
    if (!open) return;
    counts.errors++;
    if (err.message === TIMED_OUT) counts.timeouts++;
    send({ type: 'counts', counts });
  });
  process.on('message', (command: Command) => {
    if (command === 'open') open = true;
    if (command === 'close') {
      open = false;
      instance.stop();
    }
  });
  // the parent's going away ends this process too: the IPC channel closes with it
  process.on('disconnect', () => instance.stop());
  // the last report, and only once it is written may the channel close
  const finish = () => process.send!({ type: 'finished', counts } satisfies Report, undefined, {}, () => process.disconnect());
  done.then(finish, finish);
}

main(JSON.parse(process.argv[2]) as BackgroundArgs);
