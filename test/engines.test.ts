// A clean `npm ci` on the Node.js version the README names prints no EBADENGINE warning: every locked package admits it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';
import t from 'tap';
import { projectRoot } from '../shared/kernel/paths.js';

const root = projectRoot();
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { version?: string; engines?: { node?: string } | string[]; optional?: boolean; os?: string[] }>;
};

t.test('the README and package.json name the same minimum Node.js', async (t) => {
  const minimum = semver.minVersion(pkg.engines.node);
  t.ok(minimum, `engines.node ${pkg.engines.node} has a minimum`);
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  t.match(readme, new RegExp(`Node\\.js ${minimum!.major}\\.${minimum!.minor}`), 'the README states it');
});

t.test('every locked package admits the minimum Node.js (no EBADENGINE on npm ci)', async (t) => {
  const minimum = semver.minVersion(pkg.engines.node)!.version;
  const refusing: string[] = [];
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path === '' || !entry.engines || Array.isArray(entry.engines) || !entry.engines.node) continue;
    if (!semver.satisfies(minimum, entry.engines.node, { includePrerelease: true })) {
      refusing.push(`${path.replace(/^.*node_modules\//, '')}@${entry.version} needs node ${entry.engines.node}`);
    }
  }
  t.same(refusing, [], `packages needing more than Node.js ${minimum} (pin them with package.json overrides)`);
});
