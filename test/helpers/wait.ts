// Waiting in tests for what happens in another process (an export's child, a file appearing).

/** Calls `check` every 100 ms until it returns a value (not undefined); fails after 60 s naming `what`. */
export async function until<T>(what: string, check: () => T | undefined | Promise<T | undefined>): Promise<T> {
  const end = Date.now() + 60_000;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
