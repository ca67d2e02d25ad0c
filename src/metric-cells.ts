// counters and histograms for the per-request path, with their label sets resolved once: a request
// finds its cell by its label values (route and status, op and dtype) and adds to plain numbers, where
// prom-client's own metrics hash and validate the labels object on every call. The registry reads these
// like its own (Registry.registerMetric; get() returns what prom-client's get() does).
import type { Registry } from 'prom-client';

type Labels = Record<string, string | number>;
/** prom-client's form: `le` in labels, the cell's labels shared after it */
interface Value { labels: Labels; value: number; metricName?: string; sharedLabels?: Labels }

/** cells by label values (at most four labels), in first-use order; `names` are the label names,
 *  in the values' order. One Map per label: the values are mostly the same string objects each time
 *  (a route, a method, an op), whose hashes V8 keeps, so finding a cell costs four lookups */
class Cells<C> {
  private readonly root = new Map<string, Map<string, Map<string, Map<string, C>>>>();
  private readonly list: C[] = [];
  // the cell found last: most requests in a row share their label values
  private lastA = '';
  private lastB = '';
  private lastC = '';
  private lastD = '';
  private lastCell: C | null = null;
  constructor(private readonly names: readonly string[], private readonly make: (labels: Labels) => C) {
    if (names.length > 4) throw new Error('at most four labels');
  }

  at(a = '', b = '', c = '', d = ''): C {
    if (this.lastCell !== null && a === this.lastA && b === this.lastB && c === this.lastC && d === this.lastD) return this.lastCell;
    const cell = this.find(a, b, c, d);
    this.lastA = a;
    this.lastB = b;
    this.lastC = c;
    this.lastD = d;
    this.lastCell = cell;
    return cell;
  }

  private find(a: string, b: string, c: string, d: string): C {
    let byB = this.root.get(a);
    if (byB === undefined) this.root.set(a, (byB = new Map()));
    let byC = byB.get(b);
    if (byC === undefined) byB.set(b, (byC = new Map()));
    let byD = byC.get(c);
    if (byD === undefined) byC.set(c, (byD = new Map()));
    let cell = byD.get(d);
    if (cell === undefined) {
      const labels: Labels = {};
      [a, b, c, d].slice(0, this.names.length).forEach((value, i) => { labels[this.names[i]] = value; });
      cell = this.make(labels);
      byD.set(d, cell);
      this.list.push(cell);
    }
    return cell;
  }

  all(): readonly C[] {
    return this.list;
  }

  clear(): void {
    this.root.clear();
    this.list.length = 0;
    this.lastCell = null;
  }
}

interface MetricConfig { name: string; help: string; labelNames?: readonly string[]; registers: Registry[] }

export interface CounterCell { labels: Labels; value: number }

export class CellCounter {
  readonly type = 'counter';
  readonly aggregator = 'sum';
  readonly name: string;
  readonly help: string;
  private readonly cells: Cells<CounterCell>;

  constructor(config: MetricConfig) {
    this.name = config.name;
    this.help = config.help;
    this.cells = new Cells(config.labelNames ?? [], (labels) => ({ labels, value: 0 }));
    if ((config.labelNames ?? []).length === 0) this.cells.at();
    for (const registry of config.registers) registry.registerMetric(this as never);
  }

  /** the cell of these label values (in labelNames' order): add to its `value` */
  cell(a?: string, b?: string, c?: string, d?: string): CounterCell {
    return this.cells.at(a, b, c, d);
  }

  get() {
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values: this.cells.all().map(({ labels, value }): Value => ({ labels, value })) };
  }

  reset(): void {
    this.cells.clear();
  }
}

export class HistogramCell {
  /** observations per bucket (not cumulative); the last counts those above every bound */
  private readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(readonly labels: Labels, private readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    let i = 0;
    while (i < this.bounds.length && value > this.bounds[i]) i++;
    this.counts[i]++;
    this.sum += value;
    this.count++;
  }

  /** cumulative counts per bound, as Prometheus' `le` buckets */
  cumulative(): number[] {
    let total = 0;
    return this.bounds.map((_, i) => (total += this.counts[i]));
  }
}

export class CellHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly name: string;
  readonly help: string;
  private readonly bounds: readonly number[];
  private readonly cells: Cells<HistogramCell>;

  constructor(config: MetricConfig & { buckets: readonly number[] }) {
    this.name = config.name;
    this.help = config.help;
    this.bounds = [...config.buckets].sort((a, b) => a - b);
    this.cells = new Cells(config.labelNames ?? [], (labels) => new HistogramCell(labels, this.bounds));
    // as prom-client's: a histogram without labels shows its zeros before the first observation
    if ((config.labelNames ?? []).length === 0) this.cells.at();
    for (const registry of config.registers) registry.registerMetric(this as never);
  }

  /** the cell of these label values (in labelNames' order): observe into it */
  cell(a?: string, b?: string, c?: string, d?: string): HistogramCell {
    return this.cells.at(a, b, c, d);
  }

  get() {
    const values: Value[] = [];
    for (const cell of this.cells.all()) {
      const bucket = `${this.name}_bucket`;
      cell.cumulative().forEach((value, i) => values.push({ labels: { le: this.bounds[i] }, sharedLabels: cell.labels, value, metricName: bucket }));
      values.push({ labels: { le: '+Inf' }, sharedLabels: cell.labels, value: cell.count, metricName: bucket });
      values.push({ labels: cell.labels, value: cell.sum, metricName: `${this.name}_sum` });
      values.push({ labels: cell.labels, value: cell.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    this.cells.clear();
  }
}
