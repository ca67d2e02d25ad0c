// route schemas of the service endpoints (API.md §6). service-routes.ts may attach them as `schema`;
// until it does, docs.ts documents each route without a schema from this table.
import { JSON_TYPE } from '../media-types.js';

const workers = { type: 'integer', minimum: 0, description: 'live worker threads' };

function json(description: string, schema: object) {
  return { description, content: { [JSON_TYPE]: { schema } } };
}

const readiness = (states: string[]) => ({
  type: 'object',
  additionalProperties: false,
  required: ['status', 'workers'],
  properties: { status: { type: 'string', enum: states }, workers },
});

export const serviceRouteSchemas: Readonly<Record<string, object>> = {
  '/healthz': {
    operationId: 'healthz',
    tags: ['service'],
    summary: 'Liveness',
    response: {
      200: json('the process is alive', {
        type: 'object', additionalProperties: false, required: ['status'], properties: { status: { type: 'string', enum: ['ok'] } },
      }),
    },
  },
  '/readyz': {
    operationId: 'readyz',
    tags: ['service'],
    summary: 'Readiness',
    response: {
      200: json('the worker pool is up and the server is not draining', readiness(['ready'])),
      503: json('the worker pool is still starting, or the server is draining', readiness(['starting', 'draining'])),
    },
  },
  '/metrics': {
    operationId: 'metrics',
    tags: ['service'],
    summary: 'Prometheus metrics',
    description: 'Request counts and latency histograms by route and status, rows and bytes normalized, pool queue depth, worker utilization.',
    response: {
      200: { description: 'Prometheus text exposition format, version 0.0.4', content: { 'text/plain': { schema: { type: 'string' } } } },
    },
  },
  '/openapi.json': {
    operationId: 'openapi',
    tags: ['service'],
    summary: 'This OpenAPI document',
    response: { 200: json('the OpenAPI 3.1 document, the same as openapi/openapi.json', { type: 'object' }) },
  },
  '/docs': {
    operationId: 'docs',
    tags: ['service'],
    summary: 'Interactive API documentation (Swagger UI, served locally)',
    response: { 200: { description: 'an HTML page', content: { 'text/html': { schema: { type: 'string' } } } } },
  },
};
