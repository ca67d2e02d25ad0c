// writes openapi/openapi.json from the route schemas of the built app (run `npm run build` first);
// the app is readied, never listens, and is closed.
import { writeFileSync } from 'node:fs';
import { buildApp } from '../dist/app.js';
import { renderOpenapi } from '../dist/http/openapi/document.js';

const target = new URL('../openapi/openapi.json', import.meta.url);
const app = await buildApp({ logLevel: 'silent', workers: 1 });
try {
  await app.ready();
  writeFileSync(target, renderOpenapi(app));
} finally {
  await app.close();
}
console.log(`wrote ${target.pathname}`);
