// Entry point of the bundle (dist/parley.cjs) and of the single executable: runs the CLI unconditionally.
// main.ts's own `require.main === module` check cannot be used here: inside a SEA `require` is a
// builtins-only loader without `.main`; build.mjs also defines `require.main` away so the check never
// fires in the bundle and the CLI runs exactly once.
import { main } from './main';

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
