// holds an answer of the server to the checked-in OpenAPI document: its status, content type,
// headers and body must be what the document lists for that operation. Usable from any test:
// `const contract = await loadContract(); contract.checkResponse(request, response)`.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import SwaggerParser from '@apidevtools/swagger-parser';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { Unpackr } from 'msgpackr';
import { parseAnswerJson } from '../v2/oip.js';

type Json = Record<string, any>;

export const DOCUMENT_PATH = fileURLToPath(new URL('../../openapi/openapi.json', import.meta.url));

export interface SentRequest { method: string; url: string; headers: Record<string, string>; payload?: string | Buffer }
export interface Answer { statusCode: number; headers: Record<string, unknown>; rawPayload: Buffer }

const objectUnpackr = new Unpackr({ mapsAsObjects: true, useRecords: false });
const mapUnpackr = new Unpackr({ mapsAsObjects: false, useRecords: false });
const BIN_KEYS = Symbol('binKeys');
const MSGPACK = /^application\/(x-|vnd\.)?msgpack$/;
const OCTET = 'application/octet-stream';

/** the Open Inference Protocol's paths: JSON with bare NaN / Infinity tokens, binary framing, {"error"} bodies */
export const isOip = (url: string) => { const path = url.split('?')[0]; return path === '/v2' || path.startsWith('/v2/'); };

/** Map → object; remembers which maps had bin keys (msgpack-numpy form) */
function objectsOf(value: unknown): unknown {
  if (value instanceof Map) {
    const object: Json = {};
    let binKeys = false;
    for (const [key, item] of value) {
      binKeys ||= key instanceof Uint8Array;
      object[key instanceof Uint8Array ? Buffer.from(key).toString('utf8') : String(key)] = objectsOf(item);
    }
    if (binKeys) Object.defineProperty(object, BIN_KEYS, { value: true });
    return object;
  }
  if (Array.isArray(value)) return value.map(objectsOf);
  return value;
}

/** msgpack as the brief's reader decodes it, falling back to maps when keys are bin */
export function decodeMsgpack(bytes: Uint8Array): unknown {
  try {
    return objectUnpackr.unpack(bytes);
  } catch {
    return objectsOf(mapUnpackr.unpack(bytes));
  }
}

/** every msgpack-numpy map (it has `nd`) came with bin keys, and only those did */
function numpyKeysProblem(value: unknown, path = 'body'): string | null {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const problem = numpyKeysProblem(value[i], `${path}[${i}]`);
      if (problem) return problem;
    }
    return null;
  }
  if (typeof value !== 'object' || value === null || value instanceof Uint8Array) return null;
  const bin = (value as { [BIN_KEYS]?: boolean })[BIN_KEYS] === true;
  if (bin !== 'nd' in value) return `${path}: ${bin ? 'bin keys outside a msgpack-numpy map' : 'a msgpack-numpy map with str keys'}`;
  for (const [key, item] of Object.entries(value)) {
    const problem = numpyKeysProblem(item, `${path}.${key}`);
    if (problem) return problem;
  }
  return null;
}

export const essence = (type: unknown) => (typeof type === 'string' ? type.split(';')[0].trim().toLowerCase() : undefined);

/** JSON Schema has no bytes: binary strings of the document become a keyword that wants a Uint8Array */
function markBinary(node: unknown, seen = new WeakSet<object>()): void {
  if (typeof node !== 'object' || node === null || seen.has(node)) return;
  seen.add(node);
  const object = node as Json;
  if (object.type === 'string' && object.format === 'binary') {
    delete object.type;
    delete object.format;
    object['x-binary'] = true;
  }
  for (const value of Object.values(object)) markBinary(value, seen);
}

export interface Checked {
  /** `METHOD /path status`, or `* status` for a path or method the document does not have */
  key: string;
  body: unknown;
}

export class Contract {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly validators = new Map<object, ValidateFunction>();

  constructor(readonly document: Json) {
    this.ajv.addKeyword({ keyword: 'x-binary', schemaType: 'boolean', validate: (want: boolean, data: unknown) => !want || data instanceof Uint8Array });
  }

  /** every (operation, status) the document lists, as `METHOD /path status` */
  documentedPairs(): string[] {
    const pairs: string[] = [];
    for (const [path, item] of Object.entries(this.document.paths as Json)) {
      for (const [method, operation] of Object.entries(item as Json)) {
        for (const status of Object.keys(operation.responses)) pairs.push(`${method.toUpperCase()} ${path} ${status}`);
      }
    }
    return pairs;
  }

  /** the document's path for a request's: itself, or the template it fills (/docs/api.md → /docs/{page}) */
  pathOf(url: string): string {
    const path = url.split('?')[0];
    if (path in this.document.paths) return path;
    const fills = (template: string) => new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}/]+\}/g, '[^/]+')}$`).test(path);
    return Object.keys(this.document.paths).find((template) => template.includes('{') && fills(template)) ?? path;
  }

  operation(method: string, url: string): Json | undefined {
    return this.document.paths[this.pathOf(url)]?.[method.toLowerCase()];
  }

  /** the errors of `value` against `schema`, or null */
  problems(schema: object, value: unknown): string | null {
    let validate = this.validators.get(schema);
    if (!validate) {
      validate = this.ajv.compile(schema);
      this.validators.set(schema, validate);
    }
    if (validate(value)) return null;
    return this.ajv.errorsText(validate.errors, { dataVar: 'body', separator: '\n' });
  }

  /** throws, saying what differs, unless the document lists this answer */
  checkResponse(request: SentRequest, answer: Answer): Checked {
    const where = `${request.method} ${request.url} → ${answer.statusCode}`;
    const status = String(answer.statusCode);
    const operation = this.operation(request.method, request.url);
    let response: Json | undefined;
    let key: string;
    if (operation) {
      key = `${request.method.toUpperCase()} ${this.pathOf(request.url)} ${status}`;
      response = operation.responses[status];
      if (!response) throw new Error(`${where}: the document lists no ${status} for this operation (it has ${Object.keys(operation.responses).join(', ')})`);
    } else {
      // any other path or method: 404, or 401 first under /v1/ and /v2 when API keys are configured
      key = `* ${status}`;
      const oip = isOip(request.url);
      const name = status === '404' ? (oip ? 'OipNotFound' : 'NotFound') : status === '401' && oip ? 'OipUnauthorized'
        : status === '401' && request.url.startsWith('/v1/') ? 'Unauthorized' : undefined;
      response = name ? this.document.components.responses[name] : undefined;
      if (!response) throw new Error(`${where}: the document has no such operation, and ${status} is not its answer to unknown routes`);
    }
    for (const [name, header] of Object.entries((response.headers ?? {}) as Json)) {
      const value = answer.headers[name.toLowerCase()];
      if (value === undefined) {
        if (header.required) throw new Error(`${where}: header ${name} is documented as always sent, but is missing`);
        continue;
      }
      const typed = header.schema.type === 'integer' && /^\d+$/.test(String(value)) ? Number(value) : value;
      const problem = this.problems(header.schema, typed);
      if (problem) throw new Error(`${where}: header ${name}: ${JSON.stringify(value)}: ${problem}`);
    }
    const type = essence(answer.headers['content-type']);
    const content = response.content as Json | undefined;
    if (!content) {
      if (answer.rawPayload.length > 0) throw new Error(`${where}: the document lists no body, got ${type}`);
      return { key, body: undefined };
    }
    const media = type === undefined ? undefined : content[type];
    if (!media) throw new Error(`${where}: content type ${String(type)} is not listed (${Object.keys(content).join(', ')})`);
    const body = bodyOf(type!, answer.rawPayload, isOip(request.url));
    const problem = this.problems(media.schema, body);
    if (problem) throw new Error(`${where} (${type}): the body does not match the document:\n${problem}\n${preview(answer.rawPayload, type!)}`);
    if (type === OCTET && isOip(request.url)) return { key, body: this.checkFraming(where, content, answer.headers['inference-header-content-length'], answer.rawPayload) };
    if (MSGPACK.test(type!)) {
      const keys = numpyKeysProblem(body);
      if (keys) throw new Error(`${where}: ${keys}`);
    }
    return { key, body };
  }

  /** the documented request schema for this content type: what a request that succeeded must satisfy */
  requestSchema(method: string, url: string, contentType: string): object | undefined {
    return this.operation(method, url)?.requestBody?.content?.[contentType]?.schema;
  }

  /**
   * an OIP body (request or answer) with Inference-Header-Content-Length: its JSON header must match
   * the documented JSON body, and the bytes after it be the blocks the header announces, exactly.
   * Returns the JSON header.
   */
  checkFraming(where: string, content: Json, headerLength: unknown, raw: Buffer): unknown {
    if (typeof headerLength !== 'string' || !/^[1-9]\d*$/.test(headerLength)) throw new Error(`${where}: a binary body needs Inference-Header-Content-Length, got ${String(headerLength)}`);
    const length = Number(headerLength);
    const header = bodyOf('application/json', raw.subarray(0, length), true) as Json;
    const problem = this.problems(content['application/json'].schema, header);
    if (problem) throw new Error(`${where}: the JSON header does not match the document:\n${problem}\n${raw.subarray(0, length).toString('utf8').slice(0, 400)}`);
    const tensors = (header.inputs ?? header.outputs ?? []) as Json[];
    const blocks = tensors.reduce((sum, t) => sum + (t.parameters?.binary_data_size ?? 0), 0);
    if (blocks !== raw.length - length) throw new Error(`${where}: the header announces ${blocks} bytes of tensors, ${raw.length - length} follow it`);
    return header;
  }

  /** the problems of a request the server accepted against the document's request body, or null;
   *  an OIP infer body is read as the server reads it, whatever its Content-Type */
  requestProblems(request: SentRequest): string | null {
    const raw = Buffer.isBuffer(request.payload) ? request.payload : Buffer.from(request.payload ?? '');
    const content = this.operation(request.method, request.url)?.requestBody?.content as Json | undefined;
    if (content === undefined) return `${request.method} ${request.url}: the document lists no request body`;
    if (isOip(request.url)) {
      const framed = request.headers['inference-header-content-length'];
      if (framed === undefined) return this.problems(content['application/json'].schema, bodyOf('application/json', raw, true));
      this.checkFraming(`${request.method} ${request.url} request`, content, framed, raw);
      return this.problems(content[OCTET].schema, raw);
    }
    const type = essence(request.headers['content-type']);
    const schema = type === undefined ? undefined : content[type]?.schema;
    if (schema === undefined) return `${request.method} ${request.url}: no request schema for ${String(type)}`;
    return this.problems(schema, bodyOf(type!, raw));
  }
}

/** `oip`: the JSON may hold the bare tokens NaN, Infinity, -Infinity (OIP.md), read as those numbers */
export function bodyOf(type: string, raw: Buffer, oip = false): unknown {
  if (type === 'application/json') return oip ? parseAnswerJson(raw.toString('utf8')) : JSON.parse(raw.toString('utf8'));
  if (type === OCTET) return raw;
  if (MSGPACK.test(type)) return decodeMsgpack(raw);
  return raw.toString('utf8');
}

function preview(raw: Buffer, type: string): string {
  return type.startsWith('application/json') || type.startsWith('text/') ? raw.toString('utf8').slice(0, 400) : `${raw.length} bytes`;
}

export function readDocument(): Json {
  return JSON.parse(readFileSync(DOCUMENT_PATH, 'utf8'));
}

/** the checked-in document with every $ref resolved (by the validator's parser), ready to check answers with */
export async function loadContract(document: Json = readDocument()): Promise<Contract> {
  const resolved = (await SwaggerParser.dereference(structuredClone(document) as never)) as Json;
  markBinary(resolved);
  return new Contract(resolved);
}
