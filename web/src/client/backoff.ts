// Zulip's retry backoff (web/src/util.ts get_retry_backoff_seconds): 2^((n+1)/2) seconds capped at 90,
// with jitter (half to all of it), and at least what a rate limit's retry-after asks.
export function backoffMs(failures: number, retryAfterSeconds = 0, random = Math.random): number {
  const scale = Math.min(2 ** ((failures + 1) / 2), 90);
  const delay = ((1 + random()) / 2) * scale;
  return Math.round(Math.max(delay, retryAfterSeconds ? retryAfterSeconds + random() * 0.5 : 0) * 1000);
}
