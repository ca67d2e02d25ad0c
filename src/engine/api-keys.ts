// API keys (API.md §7): a bearer key is one of the configured ones. Digests are compared in constant
// time, so the time taken says nothing about the keys.
import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (key: string) => createHash('sha256').update(key).digest();

/** null when the server has no keys (nothing is guarded); else: does this Authorization value carry a key? */
export function createKeyCheck(apiKeys: readonly string[]): ((authorization: string | undefined) => boolean) | null {
  if (apiKeys.length === 0) return null;
  const keys = apiKeys.map(digest);
  return (authorization) => {
    const match = /^Bearer (.+)$/i.exec(authorization ?? '');
    const given = digest(match ? match[1] : '');
    let ok = false;
    for (const key of keys) ok = timingSafeEqual(key, given) || ok;
    return ok && match !== null;
  };
}
