// Time source. Tests inject a clock they can move; everything else uses the system clock.
export interface Clock {
  /** Milliseconds since the epoch. */
  nowMs(): number;
}

export const systemClock: Clock = { nowMs: () => Date.now() };

/** Whole UNIX seconds now. */
export const nowSeconds = (clock: Clock) => Math.floor(clock.nowMs() / 1000);
