// the last step of the OpenAPI document: schemas with a title become named components, the error
// answers shared by operations become components.responses, and every map is put in a fixed order,
// so the checked-in document diffs cleanly.
import { isDeepStrictEqual } from 'node:util';

type Json = Record<string, unknown>;

/** an error answer's name, by the name of its body's schema */
const RESPONSE_NAMES: Readonly<Record<string, string>> = {
  Error400: 'BadRequest', Error401: 'Unauthorized', Error404: 'NotFound', Error406: 'NotAcceptable', Error413: 'PayloadTooLarge',
  Error415: 'UnsupportedMediaType', Error500: 'InternalError', Error503: 'ServiceUnavailable', Error504: 'GatewayTimeout',
  QueryError: 'UnexpectedQuery', OipQueryError: 'OipUnexpectedQuery',
};
/** the /v2 error answers share one body, {"error"}: they are named by status */
const OIP_RESPONSE_NAMES: Readonly<Record<string, string>> = {
  400: 'OipBadRequest', 401: 'OipUnauthorized', 404: 'OipNotFound', 408: 'OipRequestTimeout', 413: 'OipPayloadTooLarge',
  415: 'OipUnsupportedMediaType', 500: 'OipInternalError', 503: 'OipServiceUnavailable', 504: 'OipGatewayTimeout',
};
const SCHEMAS = '#/components/schemas/';
/** response headers the server always sends with that answer */
const ALWAYS_SENT_HEADERS = new Set(['Server-Timing', 'Retry-After']);
const TOP_LEVEL_ORDER = ['openapi', 'info', 'externalDocs', 'servers', 'tags', 'security', 'paths', 'components'];

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const without = (o: Json, key: string): Json => Object.fromEntries(Object.entries(o).filter(([k]) => k !== key));
const sorted = (o: Json, compare?: (a: string, b: string) => number): Json =>
  Object.fromEntries(Object.keys(o).sort(compare).map((k) => [k, o[k]]));

class Components {
  readonly schemas: Json = {};
  readonly responses: Json = {};

  /** `descriptions`: what each named component says about itself (the dialects give them) */
  constructor(private readonly descriptions: Readonly<Record<string, string>>) {}

  /** depth first, so a component refers to the components inside it; example values are data, not schemas */
  hoistSchemas(node: unknown): unknown {
    if (Array.isArray(node)) return node.map((item) => this.hoistSchemas(item));
    if (!isObject(node)) return node;
    const out: Json = {};
    for (const [key, value] of Object.entries(node)) out[key] = key === 'example' || key === 'examples' ? value : this.hoistSchemas(value);
    if (typeof out.title !== 'string' || !('type' in out || 'oneOf' in out || 'anyOf' in out)) return out;
    const title = out.title;
    const core = without(out, 'description');
    const own = this.descriptions[title];
    const existing = this.schemas[title];
    if (existing === undefined) {
      this.schemas[title] = own === undefined ? core : { ...core, description: own };
    } else if (!isDeepStrictEqual(without(existing as Json, 'description'), core)) {
      throw new Error(`OpenAPI: two different schemas are titled ${title}`);
    }
    const ref: Json = { $ref: `#/components/schemas/${title}` };
    if (typeof out.description === 'string' && out.description !== own) ref.description = out.description;
    return ref;
  }

  /** an error answer (its schema is Error<status>, another of RESPONSE_NAMES, or OipError) that several operations share is written once */
  hoistResponse(response: Json, status: string): Json {
    const schema = ((response.content as Json | undefined)?.['application/json'] as Json | undefined)?.schema as Json | undefined;
    const ref = typeof schema?.$ref === 'string' && schema.$ref.startsWith(SCHEMAS) ? schema.$ref.slice(SCHEMAS.length) : '';
    const name = ref === 'OipError' ? OIP_RESPONSE_NAMES[status] : RESPONSE_NAMES[ref];
    if (name === undefined) return response;
    const existing = this.responses[name];
    if (existing === undefined) this.responses[name] = response;
    else if (!isDeepStrictEqual(existing, response)) throw new Error(`OpenAPI: two different ${name} answers`);
    return { $ref: `#/components/responses/${name}` };
  }
}

function tidyResponse(response: Json): Json {
  const out = { ...response };
  if (isObject(out.headers)) {
    const headers: Json = {};
    for (const [name, header] of Object.entries(sorted(out.headers))) {
      headers[name] = ALWAYS_SENT_HEADERS.has(name) ? { ...(header as Json), required: true } : header;
    }
    out.headers = headers;
  }
  if (isObject(out.content)) out.content = sorted(out.content);
  return out;
}

function tidyOperation(operation: Json, components: Components): Json {
  const out = components.hoistSchemas(operation) as Json;
  if (isObject(out.requestBody) && isObject(out.requestBody.content)) {
    out.requestBody = { ...out.requestBody, content: sorted(out.requestBody.content) };
  }
  const responses: Json = {};
  const byStatus = (a: string, b: string) => a.localeCompare(b, 'en', { numeric: true });
  for (const [status, response] of Object.entries(sorted(out.responses as Json, byStatus))) {
    responses[status] = components.hoistResponse(tidyResponse(response as Json), status);
  }
  out.responses = responses;
  return out;
}

/** paths grouped by their operations' tag, in the order of the document's tags, each group in alphabetical order */
function pathOrder(document: Json): (a: string, b: string) => number {
  const tags = ((document.tags ?? []) as { name: string }[]).map((t) => t.name);
  const group = (path: string) => {
    const operations = Object.values((document.paths as Json)[path] as Json) as { tags?: string[] }[];
    const tag = operations.find((o) => o.tags !== undefined)?.tags?.[0];
    return tag === undefined ? tags.length : tags.indexOf(tag);
  };
  return (a, b) => group(a) - group(b) || a.localeCompare(b);
}

export function tidyDocument(document: Json, descriptions: Readonly<Record<string, string>>): Json {
  const components = new Components(descriptions);
  const given = (document.components ?? {}) as Json;
  for (const [name, response] of Object.entries((given.responses ?? {}) as Json)) {
    components.responses[name] = tidyResponse(components.hoistSchemas(response) as Json);
  }
  const paths: Json = {};
  for (const [path, item] of Object.entries(sorted(document.paths as Json, pathOrder(document)))) {
    const operations: Json = {};
    for (const [method, operation] of Object.entries(sorted(item as Json))) operations[method] = tidyOperation(operation as Json, components);
    paths[path] = operations;
  }
  const merged: Json = {
    ...document,
    paths,
    components: sorted({
      ...given,
      schemas: sorted({ ...(given.schemas as Json), ...components.schemas }),
      responses: sorted(components.responses),
    }),
  };
  const keys = [...TOP_LEVEL_ORDER.filter((k) => k in merged), ...Object.keys(merged).filter((k) => !TOP_LEVEL_ORDER.includes(k)).sort()];
  return Object.fromEntries(keys.map((k) => [k, merged[k]]));
}
