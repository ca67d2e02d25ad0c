// which paths belong to the Open Inference Protocol dialect: /v2 and everything under it.

/** `path` without its query */
export function isV2Path(path: string): boolean {
  return path === '/v2' || path.startsWith('/v2/');
}
