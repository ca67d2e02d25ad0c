// the service's event-loop delay over a measured window, from its own /metrics: prom-client's
// nodejs_eventloop_lag_* gauges read a monitorEventLoopDelay histogram (10 ms resolution here) that
// is reset at every scrape, so a scrape before the window and one after it give the window's figures.
// Each sample is the whole interval between two of its 10 ms ticks: an idle loop reads about 10 ms,
// and a request that held the loop for d ms shows as about 10 + d.
export interface LoopDelay { p50Ms: number; p99Ms: number; maxMs: number }

function gauge(text: string, name: string): number | null {
  const match = new RegExp(`^${name} ([0-9.eE+-]+)`, 'm').exec(text);
  return match === null ? null : Number(match[1]) * 1000;
}

/** the delay since the last scrape; null when the server has no such metrics (the echo, the floor) */
export async function scrapeLoopDelay(base: string): Promise<LoopDelay | null> {
  try {
    const response = await fetch(`${base}/metrics`);
    if (!response.ok) return null;
    const text = await response.text();
    const [p50Ms, p99Ms, maxMs] = ['p50', 'p99', 'max'].map((q) => gauge(text, `nodejs_eventloop_lag_${q}_seconds`));
    return p50Ms === null || p99Ms === null || maxMs === null ? null : { p50Ms, p99Ms, maxMs };
  } catch {
    return null;
  }
}
