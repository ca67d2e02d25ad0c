// the worked error example of the service's own error form (API.md §5), beside each dialect's own
// examples (http/v1/openapi-examples.ts, http/v2/openapi-examples.ts); test/openapi replays every one.
import type { Example } from '../../ops/operation.js';

export const errorExamples: Readonly<Record<number, Record<string, Example>>> = {
  400: {
    unknownField: {
      summary: 'a misspelled eps: { "input": …, "epsilon": 0 }',
      value: { statusCode: 400, code: 'NORM_ERR_FIELD_UNKNOWN', error: 'Bad Request', message: 'epsilon: unknown field' },
    },
  },
};
