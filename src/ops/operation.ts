// what every operation describes about itself: the one table (ops/registry.ts) the /v1 schemas, the
// OpenAPI document and the request checks are derived from. Adding an operation is one file here
// (and its lines in registry.ts) plus its kernels; a row-wise one's check names its kernel and that
// kernel's own parameters (kernels/row-kernels.ts).
import type { CheckedRequest } from '../jobs/checked-request.js';

/** a JSON Schema fragment: validated by ajv, shown in the OpenAPI document */
export type Schema = Record<string, unknown>;

export interface Example { summary: string; value: unknown }

export interface Operation {
  name: string;
  summary: string;
  /** the math, for the OpenAPI document */
  description: string;
  /** the body's fields; `tensor` is the schema of a tensor in the body's encoding */
  fields(tensor: Schema): Record<string, Schema>;
  required: readonly string[];
  /** the fields of a 200 answer; `tensor` is the schema of a result tensor in its encoding */
  responseFields(tensor: Schema): Record<string, Schema>;
  /** the checks a schema cannot express (shapes, axes, dtypes); `path` prefixes field names in errors
   *  ('' alone, `requests[3].` in a batch); allocates nothing, so a batch is checked whole first */
  check(body: Record<string, unknown>, path: string, fromJson: boolean): CheckedRequest;
  /** worked examples of the OpenAPI document, replayed by test/openapi against the server */
  examples: { request: Record<string, Example>; response: Record<string, Example> };
}
