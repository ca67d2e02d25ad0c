// metadata whose given keys go out never indexed by HPACK (RFC 7541 §6.2.3), for values that differ on
// every call: the `server-timing` trailer of each ModelInfer answer. Indexed (nghttp2's default), each
// answer added its value to the connection's 4 KiB header table and pushed out the entries that every
// answer repeats (content-type, grpc-status, grpc-message), which then went out in full again: nghttp2's
// deflate took 2.8–3.5 % of the server's CPU samples for small unary calls at 3,000 calls/s, 0.6–0.9 %
// this way, as without the trailer (perf); the client's inflate is spared alike.
// How it reaches the wire: Node's http2 sends the keys listed under `http2.sensitiveHeaders` never
// indexed; grpc-js clones a call's trailing metadata (sendStatus) and copies its toHttp2Headers() into
// the trailers it sends (Object.assign, which copies symbol keys too). Both are overridden here.
import { Metadata } from '@grpc/grpc-js';
import { sensitiveHeaders, type OutgoingHttpHeaders } from 'node:http2';

export class NeverIndexedMetadata extends Metadata {
  constructor(private readonly neverIndexed: readonly string[]) {
    super();
  }

  override clone(): NeverIndexedMetadata {
    const copy = new NeverIndexedMetadata(this.neverIndexed);
    copy.setOptions(this.getOptions());
    for (const [key, values] of this.internalRepr) copy.internalRepr.set(key, values.map((v) => (Buffer.isBuffer(v) ? Buffer.from(v) : v)));
    return copy;
  }

  override toHttp2Headers(): OutgoingHttpHeaders {
    return Object.assign(super.toHttp2Headers(), { [sensitiveHeaders]: this.neverIndexed });
  }
}
