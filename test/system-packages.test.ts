// npm test's check of the Debian packages the tests need: all found here, and those whose commands are not on PATH named.
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import { projectRoot } from '../shared/kernel/paths.js';

// The runner's own module, from the project root (only TypeScript is compiled into .build/).
const { ensureSystemPackages } = (await import(pathToFileURL(join(projectRoot(), 'test', 'system-packages.mjs')).href)) as {
  ensureSystemPackages: () => string[];
};

t.test('every package is there on this machine', async (t) => {
  t.same(ensureSystemPackages(), []);
});

t.test('packages whose commands are missing are named, and nothing is installed when told not to', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'mailpath-path-'));
  symlinkSync('/bin/sh', join(dir, 'sh'));
  const saved = { PATH: process.env['PATH'], NO_INSTALL: process.env['MAILPATH_TEST_NO_INSTALL'] };
  process.env['PATH'] = dir;
  process.env['MAILPATH_TEST_NO_INSTALL'] = '1';
  try {
    t.same(ensureSystemPackages(), ['swaks', 'poppler-utils'], 'the commands found on PATH are missing; the Python modules and dovecot are found by path');
  } finally {
    process.env['PATH'] = saved.PATH;
    if (saved.NO_INSTALL === undefined) delete process.env['MAILPATH_TEST_NO_INSTALL'];
    else process.env['MAILPATH_TEST_NO_INSTALL'] = saved.NO_INSTALL;
    rmSync(dir, { recursive: true, force: true });
  }
});
