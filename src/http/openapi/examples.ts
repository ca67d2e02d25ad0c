// the worked examples of the OpenAPI document; test/openapi replays every request here and
// checks the server answers exactly the documented response.

const x2x4 = { dtype: 'float32', shape: [2, 4], data: [1, 2, 3, 4, -1, -2, -3, -4] };
const x4 = { dtype: 'float32', shape: [4], data: [1, 2, 3, 4] };

// float32 results, as the server writes them; the batch items use the default eps
const RMS_ROW = [0.3651483654975891, 0.7302967309951782, 1.095445156097412, 1.4605934619903564];
const LN_ROW = [-1.3416407108306885, -0.4472135901451111, 0.4472135901451111, 1.3416407108306885];
const RMS_RSTD = 0.3651483654975891;
const LN_RSTD = 0.8944271802902222;
const BATCH_RMS = [0.3651483356952667, 0.7302966713905334, 1.0954450368881226, 1.460593342781067];
const BATCH_LN = [-1.3416354656219482, -0.4472118020057678, 0.4472118020057678, 1.3416354656219482];

export interface Example { summary: string; value: unknown }

export const requestExamples: Readonly<Record<'rmsnorm' | 'layernorm' | 'batch', Record<string, Example>>> = {
  rmsnorm: {
    rmsnorm2x4: { summary: 'RMSNorm of a 2×4 float32 tensor, eps 0, with stats', value: { input: x2x4, eps: 0, return_stats: true } },
  },
  layernorm: {
    layernorm2x4: { summary: 'LayerNorm of a 2×4 float32 tensor, eps 0, with stats', value: { input: x2x4, eps: 0, return_stats: true } },
  },
  batch: {
    rmsnormAndLayernorm: {
      summary: 'RMSNorm and LayerNorm of [1, 2, 3, 4]',
      value: { requests: [{ op: 'rmsnorm', input: x4 }, { op: 'layernorm', input: x4 }] },
    },
  },
};

const negated = (row: number[]) => row.map((v) => -v);

export const responseExamples: Readonly<Record<'rmsnorm' | 'layernorm' | 'batch', Record<string, Example>>> = {
  rmsnorm: {
    rmsnorm2x4: {
      summary: 'rows ±[0.3651, 0.7303, 1.0954, 1.4606]; rstd 1/sqrt(7.5)',
      value: {
        output: { dtype: 'float32', shape: [2, 4], data: [...RMS_ROW, ...negated(RMS_ROW)] },
        rstd: { dtype: 'float32', shape: [2], data: [RMS_RSTD, RMS_RSTD] },
      },
    },
  },
  layernorm: {
    layernorm2x4: {
      summary: 'mean ±2.5; rstd 1/sqrt(1.25)',
      value: {
        output: { dtype: 'float32', shape: [2, 4], data: [...LN_ROW, ...negated(LN_ROW)] },
        mean: { dtype: 'float32', shape: [2], data: [2.5, -2.5] },
        rstd: { dtype: 'float32', shape: [2], data: [LN_RSTD, LN_RSTD] },
      },
    },
  },
  batch: {
    rmsnormAndLayernorm: {
      summary: 'one result per request, in order',
      value: { results: [{ output: { dtype: 'float32', shape: [4], data: BATCH_RMS } }, { output: { dtype: 'float32', shape: [4], data: BATCH_LN } }] },
    },
  },
};

export const errorExamples: Readonly<Record<number, Record<string, Example>>> = {
  400: {
    unknownField: {
      summary: 'a misspelled eps: { "input": …, "epsilon": 0 }',
      value: { statusCode: 400, code: 'NORM_ERR_FIELD_UNKNOWN', error: 'Bad Request', message: 'epsilon: unknown field' },
    },
  },
};
