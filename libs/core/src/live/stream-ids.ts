/** Redis stream ids (`<milliseconds>-<sequence>`): the ids of live events. */
const STREAM_ID = /^\d{1,20}-\d{1,20}$/;

export function isStreamId(value: string): boolean {
  return STREAM_ID.test(value);
}

/** Negative, zero or positive as `a` is older than, the same as or newer than `b`. */
export function compareStreamIds(a: string, b: string): number {
  const [aMs, aSeq] = a.split('-').map(BigInt);
  const [bMs, bSeq] = b.split('-').map(BigInt);
  if (aMs !== bMs) return aMs < bMs ? -1 : 1;
  return aSeq === bSeq ? 0 : aSeq < bSeq ? -1 : 1;
}
