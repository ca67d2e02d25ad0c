// copies the gRPC service definitions (src/grpc/proto/*.proto) beside the compiled code, where
// dist/grpc/definitions.js loads them at start-up (tsc copies only TypeScript).
import { cpSync } from 'node:fs';

cpSync(new URL('../src/grpc/proto/', import.meta.url), new URL('../dist/grpc/proto/', import.meta.url), { recursive: true });
