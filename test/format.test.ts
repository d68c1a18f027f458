// The tree is formatted and linted as biome.jsonc says (`npm run format` fixes the formatting): `biome ci` finds nothing.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import t from 'tap';
import { projectRoot } from '../shared/kernel/paths.js';

t.test('biome ci: every file formatted, no lint error or warning', async (t) => {
  const root = projectRoot();
  const run = spawnSync(join(root, 'node_modules', '.bin', 'biome'), ['ci', '.', '--colors=off', '--error-on-warnings'], {
    cwd: root,
    encoding: 'utf8',
    timeout: 120_000,
  });
  t.equal(run.status, 0, `biome ci reported problems (npm run format fixes the formatting):\n${`${run.stdout}${run.stderr}`.slice(0, 6000)}`);
});
