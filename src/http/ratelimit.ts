// Rate limiting, as Zulip does it: each key (a user, an IP address, a login name) has rules of the
// form "at most N requests in S seconds", checked against a sliding log of recent request times.
// In memory: limits reset when the server restarts, like Zulip's in-memory backend.

export interface Rule {
  max: number;
  windowMs: number;
}

export interface Decision {
  allowed: boolean;
  /** The tightest rule's numbers, for X-RateLimit-* headers. */
  limit: number;
  remaining: number;
  /** UNIX seconds when the tightest rule frees a slot. */
  reset: number;
  /** Seconds to wait before retrying (when refused). */
  retryAfter: number;
}

// Zulip's defaults (DEFAULT_RATE_LIMITING_RULES).
export const RULES = {
  apiByUser: [{ max: 200, windowMs: 60_000 }],
  apiByIp: [{ max: 100, windowMs: 60_000 }],
  authenticateByUsername: [{ max: 5, windowMs: 1_800_000 }],
  // Requests that make the server send an email to an address the client names (a reusable link's
  // sign-up form, which needs no login): against using the server to mail strangers.
  sendsEmailByIp: [{ max: 5, windowMs: 86_400_000 }],
  emailChangeByUser: [
    { max: 2, windowMs: 3_600_000 },
    { max: 5, windowMs: 86_400_000 },
  ],
} satisfies Record<string, Rule[]>;

export type RuleSet = { apiByUser: Rule[]; apiByIp: Rule[]; authenticateByUsername: Rule[]; sendsEmailByIp: Rule[] };

/** Parses "N/S" (N requests per S seconds), e.g. from PARLEY_RATE_LIMIT_USER=200/60. */
export function parseRule(text: string, name: string): Rule[] {
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(text);
  if (!m || Number(m[1]) < 1 || Number(m[2]) < 1) throw new Error(`${name} must look like 200/60 (requests/seconds), got ${JSON.stringify(text)}`);
  return [{ max: Number(m[1]), windowMs: Number(m[2]) * 1000 }];
}

export class RateLimiter {
  private logs = new Map<string, number[]>();
  private lastSweep = 0;
  /** The latest time seen, to notice the wall clock moving back. */
  private lastNow = 0;

  constructor(
    readonly enabled: boolean,
    readonly rules: RuleSet = RULES,
  ) {}

  /** Decides without recording (for "only failed attempts count" rules). */
  peek(key: string, rules: Rule[], nowMs: number): Decision {
    this.followClock(nowMs);
    const log = this.logs.get(key) ?? [];
    const decisions = rules.map((rule): Decision => {
      const inWindow = log.filter((t) => t > nowMs - rule.windowMs);
      const remaining = rule.max - inWindow.length;
      const resetMs = (inWindow.length ? inWindow[0] : nowMs) + rule.windowMs;
      return {
        allowed: remaining > 0,
        limit: rule.max,
        remaining: Math.max(0, remaining - 1),
        reset: Math.ceil(resetMs / 1000),
        retryAfter: remaining > 0 ? 0 : Math.max(0.001, (resetMs - nowMs) / 1000),
      };
    });
    // Refused: the rule that makes the client wait longest. Allowed: the one closest to its limit.
    const refused = decisions.filter((d) => !d.allowed).sort((a, b) => b.retryAfter - a.retryAfter);
    if (refused.length) return refused[0];
    return decisions.sort((a, b) => a.remaining - b.remaining)[0] ?? { allowed: true, limit: 0, remaining: 0, reset: 0, retryAfter: 0 };
  }

  /** Records one request for `key`. */
  record(key: string, rules: Rule[], nowMs: number): void {
    this.followClock(nowMs);
    const longest = Math.max(...rules.map((r) => r.windowMs));
    const log = (this.logs.get(key) ?? []).filter((t) => t > nowMs - longest);
    log.push(nowMs);
    this.logs.set(key, log);
    this.sweep(nowMs, longest);
  }

  /** Checks and, when allowed, records one request. */
  hit(key: string, rules: Rule[], nowMs: number): Decision {
    if (!this.enabled) return { allowed: true, limit: 0, remaining: 0, reset: 0, retryAfter: 0 };
    const d = this.peek(key, rules, nowMs);
    if (d.allowed) this.record(key, rules, nowMs);
    return d;
  }

  /** Forgets a key (e.g. after a successful login). */
  clear(key: string): void {
    this.logs.delete(key);
  }

  /**
   * When the wall clock moves back (by more than a second: callers' times may differ by a few ms), the
   * recorded times move back with it, so that a window still ends when its time has elapsed: without
   * this a client near its limit would wait an extra hour after the clock went back an hour. (A clock
   * moved forward ends the windows early, which only forgives.)
   */
  private followClock(nowMs: number): void {
    const back = this.lastNow - nowMs;
    if (back > 1000) {
      for (const [key, log] of this.logs) this.logs.set(key, log.map((t) => t - back));
      this.lastSweep -= back;
    }
    if (back > 1000 || nowMs > this.lastNow) this.lastNow = nowMs;
  }

  // Drops idle keys now and then so memory stays bounded by active clients.
  private sweep(nowMs: number, windowMs: number): void {
    if (nowMs - this.lastSweep < 60_000) return;
    this.lastSweep = nowMs;
    for (const [key, log] of this.logs) if (log.length === 0 || log[log.length - 1] <= nowMs - Math.max(windowMs, 86_400_000)) this.logs.delete(key);
  }
}

/** The X-RateLimit-* headers for a decision. */
export function rateLimitHeaders(d: Decision): Record<string, string> {
  return {
    'X-RateLimit-Limit': String(d.limit),
    'X-RateLimit-Remaining': String(d.remaining),
    'X-RateLimit-Reset': String(d.reset),
  };
}
