// a ParseTask on a worker: the body's text parsed as its dialect says, its long lists taken out and
// moved (not copied) back to the main thread.
import { Piscina } from 'piscina';
import { parseBodyText, takeLongLists } from '../codec/json-body.js';
import type { ParseResult, ParseTask } from './protocol.js';

export function parseJsonTask(task: ParseTask): ParseResult | ReturnType<typeof Piscina.move> {
  const text = Buffer.from(task.text.memory, task.text.byteOffset, task.text.length).toString('utf8');
  const parsed = parseBodyText(text, task.dialect);
  if (!parsed.ok) return parsed;
  const result: ParseResult = { ok: true, body: parsed.body, lists: takeLongLists(parsed.body) };
  // Piscina's Transferable: the lists' buffers move with the result
  const buffers = result.lists.map((list) => list.values.buffer);
  return Piscina.move({ [Piscina.transferableSymbol]: buffers, [Piscina.valueSymbol]: result } as never);
}
