// The whole tree type-checks (sources, tests, benchmarks; the dashboard's in typecheck.web.test.ts): tap runs TypeScript
// without checking types, so this is where a type error fails CI.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { projectRoot } from '../shared/kernel/paths.js';

const run = promisify(execFile);

for (const project of ['tsconfig.json']) {
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
