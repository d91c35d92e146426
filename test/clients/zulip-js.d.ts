// zulip-js ships no types: the scenario test uses it as the untyped client it is.
declare module 'zulip-js' {
  const zulipInit: (config: { realm: string; username?: string; password?: string; apiKey?: string }) => Promise<any>;
  export default zulipInit;
}
