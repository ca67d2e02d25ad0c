// the number formats and the table the report's sections share.
import type { Spread } from './interleave.js';

export const n = (v: number | null | undefined, digits = 2) =>
  v === null || v === undefined || !Number.isFinite(v) ? '–' : v >= 1000 ? Math.round(v).toLocaleString('en-US') : v.toFixed(digits);
export const x = (v: number | null | undefined) => (v === null || v === undefined || !Number.isFinite(v) ? '–' : `${v.toFixed(2)}×`);
/** a ratio and, when the rounds of its slices gave one, their quartiles: `1.39× (1.12–1.53)` */
export const xr = (v: number | null | undefined, spread: Spread | null) =>
  spread === null || x(v) === '–' ? x(v) : `${x(v)} (${spread.q1.toFixed(2)}–${spread.q3.toFixed(2)})`;
export const pct = (v: number) => `${(100 * v).toFixed(1)} %`;

function row(cells: string[]): string {
  return `| ${cells.join(' | ')} |`;
}

/** `right`: which columns are right-aligned (numbers); all but the first by default */
export function tableMd(head: string[], rows: string[][], right = head.map((_, i) => i > 0)): string {
  return [row(head), row(head.map((_, i) => (right[i] ? '---:' : '---'))), ...rows.map(row)].join('\n');
}
