// what openapi/openapi.json says about the Open Inference Protocol's routes (OIP.md): the infer body as
// JSON or binary, its answers and headers, the {"error"} body and the parameters of every model.
// document.test.ts checks the document as a whole (generated, valid, every endpoint, auth).
import { beforeAll, describe, expect, it } from 'vitest';
import { loadContract, readDocument, type Contract } from './contract.js';

const V2_INFER = ['/v2/models/{model}/infer', '/v2/models/{model}/versions/{version}/infer'];
const V2_INFER_STATUSES = ['200', '400', '401', '404', '408', '413', '415', '431', '500', '503', '504'];

const document = readDocument();
let contract: Contract;

beforeAll(async () => {
  contract = await loadContract(document);
});

describe('/v2 in the document', () => {
  for (const path of V2_INFER) {
    it(`${path}: the OIP body as JSON or binary (documented, not validated), answers, headers and examples`, () => {
      const operation = contract.operation('POST', path.replace('{model}', 'rmsnorm').replace('{version}', '1'))!;
      const raw = document.paths[path].post;
      expect(Object.keys(raw.requestBody.content)).toEqual(['application/json', 'application/octet-stream']);
      expect(raw.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/OipInferenceRequest');
      expect(operation.requestBody.content['application/octet-stream'].schema['x-binary']).toBe(true);
      expect(raw.parameters.map((p: { in: string; name: string }) => `${p.in} ${p.name}`).sort())
        .toEqual([...path.includes('{version}') ? ['path version'] : [], 'path model', 'header Inference-Header-Content-Length', 'header Content-Encoding', 'header X-Request-Timeout-Ms'].sort());
      expect(Object.keys(operation.responses)).toEqual(V2_INFER_STATUSES);
      expect(Object.keys(operation.responses['200'].content)).toEqual(['application/json', 'application/octet-stream']);
      expect(operation.responses['200'].headers['Server-Timing'].required).toBe(true);
      expect(operation.responses['200'].headers['Inference-Header-Content-Length'].required).toBeUndefined();
      expect(operation.responses['503'].headers['Retry-After'].required).toBe(true);
      for (const status of V2_INFER_STATUSES.slice(1).filter((s) => s !== '431')) {
        expect(raw.responses[status].$ref, status).toMatch(/^#\/components\/responses\/Oip/);
        expect(operation.responses[status].content['application/json'].schema, status).toEqual(contract.document.components.schemas.OipError);
      }
      // the HTTP parser's 431 comes before any route: the service's coded form, not OIP's
      expect(operation.responses['431'].content['application/json'].schema.required).toEqual(['statusCode', 'code', 'error', 'message']);
      expect(Object.keys(raw.requestBody.content['application/json'].examples).length).toBeGreaterThan(0);
      expect(Object.keys(raw.responses['200'].content['application/json'].examples).length).toBeGreaterThan(0);
    });
  }

  it('the OIP error body and the parameters of every model', () => {
    const { OipError, OipInferenceParameters } = document.components.schemas;
    expect(OipError).toMatchObject({ type: 'object', additionalProperties: false, required: ['error'], properties: { error: { type: 'string' } } });
    expect(Object.keys(OipInferenceParameters.properties).sort()).toEqual([
      'axis', 'binary_data_output', 'channel_axis', 'eps', 'eps_placement', 'momentum', 'num_groups', 'output_dtype', 'partial', 'return_stats', 'timeout',
      'training', 'weight_offset',
    ]);
    expect(OipInferenceParameters.properties.output_dtype.enum).toEqual(['FP32', 'FP64', 'FP16', 'BF16']);
    expect(OipInferenceParameters.properties.eps.description).toMatch(/rmsnorm 0\.000001, layernorm 0\.00001/);
  });
});
