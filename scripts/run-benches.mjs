// Runs the compiled benchmarks one after another (dist/bench/*.js), or those named in argv.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';

const wanted = process.argv.slice(2);
const benches = readdirSync('dist/bench')
  .filter((name) => name.endsWith('.js'))
  .filter((name) => wanted.length === 0 || wanted.some((w) => name.includes(w)))
  .sort();
let failed = 0;
for (const name of benches) {
  console.log(`\n## bench/${name.replace(/\.js$/, '.ts')}`);
  const result = spawnSync(process.execPath, [`dist/bench/${name}`], { stdio: 'inherit' });
  if (result.status !== 0) failed += 1;
}
process.exit(failed ? 1 : 0);
