// the OpenAPI document under Redocly's `recommended` rules, as `redocly lint` runs them with no
// config: no error and no warning but the ones listed below, for the bytes GET /openapi.json serves
// and for the checked-in file.
import { readFileSync } from 'node:fs';
import { createConfig, lintFromString, type Config, type NormalizedProblem } from '@redocly/openapi-core';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { DOCUMENT_PATH, readDocument } from './contract.js';

let app: FastifyInstance;
let config: Config;

beforeAll(async () => {
  config = await createConfig({ extends: ['recommended'] });
  app = await buildApp({ logLevel: 'silent', workers: 1 });
  await app.ready();
}, 30_000);

afterAll(() => app.close());

/** none: the document is clean under the recommended rules */
const EXPECTED: string[] = [];

/** one line per problem: severity, rule, where (JSON pointer) and what */
async function lint(source: string): Promise<string[]> {
  const problems: NormalizedProblem[] = await lintFromString({ source, absoluteRef: DOCUMENT_PATH, config });
  return problems
    .filter((problem) => !problem.ignored)
    .map((problem) => `${problem.severity} ${problem.ruleId} at ${problem.location[0]?.pointer ?? '#/'}: ${problem.message}`);
}

describe('redocly recommended rules', () => {
  it('GET /openapi.json: no errors, no warnings but the expected ones', async () => {
    const res = await app.inject({ url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    expect(await lint(res.body)).toEqual(EXPECTED);
  });

  it('openapi/openapi.json: no errors, no warnings but the expected ones', async () => {
    expect(await lint(readFileSync(DOCUMENT_PATH, 'utf8'))).toEqual(EXPECTED);
  });

  it('the linter catches a missing license, security and 4xx answer', async () => {
    const broken = readDocument();
    delete broken.info.license;
    delete broken.paths['/healthz'].get.security;
    broken.paths['/healthz'].get.responses = { 200: broken.paths['/healthz'].get.responses['200'] };
    const before = new Set(await lint(JSON.stringify(readDocument())));
    const added = (await lint(JSON.stringify(broken))).filter((line) => !before.has(line));
    expect(added.map((line) => line.split(' ').slice(0, 2).join(' ')).sort()).toEqual(['error security-defined', 'warn info-license', 'warn operation-4xx-response']);
  });
});
