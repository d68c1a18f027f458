// The dashboard's tree type-checks on its own (browser code: DOM types, Preact's JSX), in a file of its own so it runs beside
// the service's check (test/typecheck.test.ts) instead of after it.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { projectRoot } from '../shared/kernel/paths.js';

const run = promisify(execFile);

for (const project of [join('web', 'tsconfig.json')]) {
  t.test(`tsc --noEmit over ${project} reports nothing`, { timeout: 300_000 }, async (t) => {
    const root = projectRoot();
    const result = await run(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, project), '--noEmit'], {
      cwd: root,
      maxBuffer: 1 << 24,
    }).then(
      () => '',
      (err: { stdout?: string; stderr?: string }) => `${err.stdout ?? ''}${err.stderr ?? ''}`,
    );
    t.equal(result, '', 'no type errors');
  });
}
