// GET /docs/{page}: the Markdown pages of docs/ (docs/api.md is the API reference), read once at
// start-up; any other page is the 404 of an unknown route. No key needed, like /docs itself.
import { readdirSync, readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { serviceError } from '../../errors.js';
import { refuseQuery } from '../service-routes.js';

// src/http/openapi and dist/http/openapi both sit three levels below the package root
const DOCS_DIR = new URL('../../../docs/', import.meta.url);
const PAGE = /^[A-Za-z0-9_-]+\.md$/;
export const MARKDOWN_TYPE = 'text/markdown; charset=utf-8';

/** page name → text; none when the folder is missing (an image built without docs/) */
function readPages(): ReadonlyMap<string, string> {
  let names: string[];
  try {
    names = readdirSync(DOCS_DIR);
  } catch {
    return new Map();
  }
  return new Map(names.filter((name) => PAGE.test(name)).map((name) => [name, readFileSync(new URL(name, DOCS_DIR), 'utf8')]));
}

export function registerReference(app: FastifyInstance): void {
  const pages = readPages();
  // no route schema: the page is not validated against a pattern (an unknown one is a 404, not a
  // 400); serviceRouteSchemas['/docs/:page'] documents it
  app.get<{ Params: { page: string } }>('/docs/:page', { onRequest: refuseQuery }, async (request, reply) => {
    const text = pages.get(request.params.page);
    if (text === undefined) throw serviceError('notFound', request.method, request.url.split('?')[0]);
    return reply.type(MARKDOWN_TYPE).send(text);
  });
}
