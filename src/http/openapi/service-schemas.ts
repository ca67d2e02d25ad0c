// route schemas of the service endpoints (API.md §6): service-routes.ts attaches them as `schema`;
// document.ts documents the routes registered without one (Swagger UI's page, the docs pages) from
// this table. None of them needs a key, and none takes a query parameter.
import { errorResponse, json, queryErrorResponse } from './response-schemas.js';

const workers = { type: 'integer', minimum: 0, description: 'live worker threads' };

const readiness = (states: string[]) => ({
  type: 'object',
  additionalProperties: false,
  required: ['status', 'workers'],
  properties: { status: { type: 'string', enum: states }, workers },
});

/** public: no security requirement, whatever API_KEYS holds (auth guards /v1/* only) */
const PUBLIC = { tags: ['service'], security: [] };

export const serviceRouteSchemas: Readonly<Record<string, object>> = {
  '/healthz': {
    operationId: 'healthz',
    ...PUBLIC,
    summary: 'Liveness',
    response: {
      200: json('the process is alive', {
        type: 'object', additionalProperties: false, required: ['status'], properties: { status: { type: 'string', enum: ['ok'] } },
      }),
      400: queryErrorResponse,
    },
  },
  '/readyz': {
    operationId: 'readyz',
    ...PUBLIC,
    summary: 'Readiness',
    response: {
      200: json('the worker pool is up and the server is not draining', readiness(['ready'])),
      400: queryErrorResponse,
      503: json('the worker pool is still starting or failed to load its kernels, or the server is draining', readiness(['starting', 'failed', 'draining'])),
    },
  },
  '/metrics': {
    operationId: 'metrics',
    ...PUBLIC,
    summary: 'Prometheus metrics',
    description: 'Request counts and latency histograms by route and status, rows and bytes normalized, pool queue depth, worker utilization.',
    response: {
      200: { description: 'Prometheus text exposition format, version 0.0.4', content: { 'text/plain': { schema: { type: 'string' } } } },
      400: queryErrorResponse,
    },
  },
  '/openapi.json': {
    operationId: 'openapi',
    ...PUBLIC,
    summary: 'This OpenAPI document',
    response: {
      200: json('the OpenAPI 3.1 document, the same as openapi/openapi.json', { type: 'object' }),
      400: queryErrorResponse,
    },
  },
  '/docs': {
    operationId: 'docs',
    ...PUBLIC,
    summary: 'Interactive API documentation (Swagger UI, served locally)',
    response: {
      200: { description: 'an HTML page', content: { 'text/html': { schema: { type: 'string' } } } },
      400: queryErrorResponse,
    },
  },
  '/docs/:page': {
    operationId: 'docsPage',
    ...PUBLIC,
    summary: 'A page of docs/: api.md is the API reference (Markdown)',
    params: {
      type: 'object',
      required: ['page'],
      properties: { page: { type: 'string', pattern: '^[A-Za-z0-9_-]+\\.md$', description: 'a Markdown file of docs/, e.g. api.md', examples: ['api.md'] } },
    },
    response: {
      200: { description: 'the Markdown text of the page', content: { 'text/markdown': { schema: { type: 'string' } } } },
      400: queryErrorResponse,
      404: errorResponse(404),
    },
  },
};
