// API keys (API.md §7) as a dialect's onRequest hook: a plugin's hooks run for its own routes and its
// own not-found handler, so 401 comes before 404 under its prefix. A route opts out with
// `config: { public: true }` (OIP's two health checks).
import type { FastifyRequest } from 'fastify';
import type { Engine } from '../engine/engine.js';
import { serviceError } from '../errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** answered without an API key even when the server has keys */
    public?: boolean;
  }
}

/** null when the server has no keys: nothing to register, nothing paid per request */
export function authHook(engine: Engine): ((request: FastifyRequest) => Promise<void>) | null {
  const check = engine.checkKey;
  if (check === null) return null;
  return async function authenticate(request) {
    if (request.routeOptions.config.public === true) return;
    if (!check(request.headers.authorization)) throw serviceError('unauthorized');
  };
}
