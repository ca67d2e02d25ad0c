// route schemas of the Open Inference Protocol's routes (OIP.md, docs/api.md §12), by route URL:
// plugin.ts attaches them as `schema`. fastify serializes the metadata answers and the {"error"}
// bodies with them; the infer answers are sent as the bytes the pipeline wrote (a string or a Buffer,
// which fastify never serializes). The infer request is documented by inferRequestDoc, which the
// infer routes give the document through their `openapi` config only (see openapi/document.ts).
import { OP_NAMES } from '../../ops/registry.js';
import { JSON_TYPE } from '../media-types.js';
import { admissionRequestHeaders, ERROR_WHEN, errorResponse, json, KEY_SECURITY, retryAfter, serverTiming } from '../openapi/response-schemas.js';
import { binaryBody, inferenceRequest, inferenceResponse } from './openapi-bodies.js';
import { inferExamples, oipErrorExamples } from './openapi-examples.js';
import { EXTENSIONS, MODEL_VERSION, PLATFORM } from './models.js';

const OCTET_TYPE = 'application/octet-stream';

/** the two health checks need no key, whatever API_KEYS holds; everything else under /v2 does when it has keys */
const PUBLIC = { tags: ['oip'], security: [] };
const GUARDED = { tags: ['oip'], security: KEY_SECURITY };

const oipError = {
  title: 'OipError',
  type: 'object',
  additionalProperties: false,
  required: ['error'],
  properties: { error: { type: 'string', description: 'names the tensor by its OIP name and the part at fault (input shape [3, 0]: …), the parameter, the header or the model' } },
};

const WHEN: Readonly<Record<number, string>> = {
  ...ERROR_WHEN,
  400: 'The JSON, an input, a parameter, a requested output or a header is invalid; the message names it (input shape [3, 0]: …, parameters.momentum: unknown field, Inference-Header-Content-Length: …).',
  401: 'API keys are configured and the request has no valid Authorization: Bearer <key>. Checked before anything else, 404 included.',
  404: "The path's model or version is unknown: the message names it and lists the models, or the one version. Any other path under /v2 answers 404 with this body too.",
  415: 'A Content-Encoding other than identity. Content-Type is not consulted.',
};

/** an error answer of the /v2 routes: {"error": message} */
function oipErrorResponse(status: number) {
  const examples = oipErrorExamples[status];
  return {
    description: WHEN[status],
    ...(status === 503 ? { headers: { 'Retry-After': retryAfter } } : {}),
    content: { [JSON_TYPE]: { schema: oipError, ...(examples ? { examples } : {}) } },
  };
}

const flag = (name: string, value: boolean) => ({
  type: 'object', additionalProperties: false, required: [name], properties: { [name]: { type: 'boolean', enum: [value] } },
});

const modelReady = (value: boolean) => ({
  type: 'object', additionalProperties: false, required: ['name', 'ready'], properties: { name: { type: 'string' }, ready: { type: 'boolean', enum: [value] } },
});

const metadataTensor = {
  title: 'OipMetadataTensor',
  type: 'object',
  additionalProperties: false,
  required: ['name', 'datatype', 'shape'],
  properties: {
    name: { type: 'string' },
    datatype: { type: 'string', enum: ['FP32'], description: 'FP32 stands for any: FP32, FP64, FP16 and BF16 are all accepted' },
    shape: { type: 'array', items: { type: 'integer', enum: [-1] }, minItems: 1, maxItems: 1, description: '[-1]: any shape' },
  },
};

const modelMetadata = {
  title: 'OipModelMetadata',
  type: 'object',
  additionalProperties: false,
  required: ['name', 'versions', 'platform', 'inputs', 'outputs'],
  properties: {
    name: { type: 'string', enum: [...OP_NAMES] },
    versions: { type: 'array', items: { type: 'string', enum: [MODEL_VERSION] } },
    platform: { type: 'string', enum: [PLATFORM] },
    inputs: { type: 'array', items: metadataTensor },
    outputs: { type: 'array', items: metadataTensor },
  },
};

const serverMetadata = {
  title: 'OipServerMetadata',
  type: 'object',
  additionalProperties: false,
  required: ['name', 'version', 'extensions'],
  properties: {
    name: { type: 'string', enum: [PLATFORM] },
    version: { type: 'string', description: 'the version of the service' },
    extensions: { type: 'array', items: { type: 'string', enum: EXTENSIONS } },
  },
};

// plain strings, so fastify's check of them cannot fail: an unknown model or version is the route's 404
const modelParam = { type: 'string', description: `the model: ${OP_NAMES.join(', ')}`, examples: ['rmsnorm'] };
const versionParam = { type: 'string', description: `the model's version; the one version is ${MODEL_VERSION}`, examples: [MODEL_VERSION] };
const params = (versioned: boolean) => ({
  type: 'object',
  required: versioned ? ['model', 'version'] : ['model'],
  properties: versioned ? { model: modelParam, version: versionParam } : { model: modelParam },
});

const INFER_ERRORS = [400, 401, 404, 408, 413, 415, 500, 503, 504];
const byModel = (pick: 'request' | 'response') => Object.fromEntries(Object.entries(inferExamples).map(([name, example]) =>
  [name, { summary: `POST /v2/models/${example.model}/infer: ${example.summary}`, value: example[pick] }]));

const inferAnswer = {
  description: 'the outputs: application/json, or application/octet-stream when any output is binary (the JSON header, then the bytes)',
  headers: {
    'Server-Timing': serverTiming,
    'Inference-Header-Content-Length': { type: 'integer', minimum: 1, description: 'with an application/octet-stream answer: the byte length of its JSON header' },
  },
  content: {
    [JSON_TYPE]: { schema: inferenceResponse, examples: byModel('response') },
    [OCTET_TYPE]: { schema: binaryBody('answer') },
  },
};

function modelRoutes(versioned: boolean): Record<string, object> {
  const prefix = versioned ? '/v2/models/:model/versions/:version' : '/v2/models/:model';
  const id = versioned ? 'ModelVersion' : 'Model';
  const of = versioned ? 'a model version' : 'a model';
  return {
    [prefix]: {
      operationId: `oip${id}Metadata`,
      ...GUARDED,
      summary: `Metadata of ${of}: its inputs and outputs`,
      params: params(versioned),
      response: { 200: json("the model's inputs and outputs", modelMetadata), 401: oipErrorResponse(401), 404: oipErrorResponse(404) },
    },
    [`${prefix}/ready`]: {
      operationId: `oip${id}Ready`,
      ...GUARDED,
      summary: `Readiness of ${of}`,
      params: params(versioned),
      response: {
        200: json('the worker pool is up and the server is not draining', modelReady(true)),
        401: oipErrorResponse(401),
        404: oipErrorResponse(404),
        503: json('the worker pool is still starting, or the server is draining', modelReady(false)),
      },
    },
    [`${prefix}/infer`]: {
      operationId: `oip${id}Infer`,
      ...GUARDED,
      summary: `Inference with ${of} (Open Inference Protocol, binary tensor data)`,
      description: "The operation of the path's model with the same checks and numerics as on /v1, its options as parameters. "
        + 'The body is JSON, or, with Inference-Header-Content-Length, a JSON header followed by the inputs\' bytes; its Content-Type is not consulted (Triton\'s client sends none). '
        + 'The answer is application/octet-stream when any requested output is binary, else application/json.',
      params: params(versioned),
      // 431 comes from the HTTP parser, before any route: in the service's form, not OIP's
      response: { 200: inferAnswer, ...Object.fromEntries(INFER_ERRORS.map((status) => [status, oipErrorResponse(status)])), 431: errorResponse(431) },
    },
  };
}

/** the health checks take no query parameter, as /healthz: one sent is a 400 naming it */
const queryRefused = {
  description: 'A query parameter was sent: the health checks take none, and one is named rather than ignored (?verbose: unknown field).',
  content: { [JSON_TYPE]: { schema: { ...oipError, title: 'OipQueryError', properties: { error: { type: 'string', description: 'names the query parameter' } } } } },
};

export const oipRouteSchemas: Readonly<Record<string, object>> = {
  '/v2': {
    operationId: 'oipServerMetadata',
    ...GUARDED,
    summary: 'Server metadata: name, version, protocol extensions',
    response: { 200: json('the server and the extensions it serves', serverMetadata), 401: oipErrorResponse(401) },
  },
  '/v2/health/live': {
    operationId: 'oipLive',
    ...PUBLIC,
    summary: 'Liveness (OIP)',
    response: { 200: json('the process is up', flag('live', true)), 400: queryRefused },
  },
  '/v2/health/ready': {
    operationId: 'oipReady',
    ...PUBLIC,
    summary: 'Readiness (OIP), as /readyz',
    response: {
      200: json('the worker pool is up and the server is not draining', flag('ready', true)),
      400: queryRefused,
      503: json('the worker pool is still starting, or the server is draining', flag('ready', false)),
    },
  },
  ...modelRoutes(false),
  ...modelRoutes(true),
};

/**
 * the infer request, for the document only: the route reads its body as bytes into shared memory,
 * whatever the Content-Type, and the handler checks it (OIP's messages, bare NaN tokens, binary
 * blocks), so fastify must never validate it against a schema
 */
export const inferRequestDoc = {
  headers: {
    type: 'object',
    properties: {
      'Inference-Header-Content-Length': {
        type: 'integer',
        minimum: 1,
        description: 'a binary body: its first this many bytes are the JSON, the inputs\' bytes follow; a whole number from 1 to the body\'s length, else a 400',
      },
      'Content-Encoding': { type: 'string', enum: ['identity'], description: 'identity or none; any other is a 415' },
      ...admissionRequestHeaders.properties,
    },
  },
  body: {
    content: {
      [JSON_TYPE]: { schema: { ...inferenceRequest, 'x-examples': byModel('request') } },
      [OCTET_TYPE]: { schema: binaryBody('request') },
    },
  },
};
