// How a test runs the `mailpath` command in a process of its own: from the compiled tree when the tests themselves run
// compiled (`npm test`, test/run.mjs), so the child starts in about a second; from source through tsx otherwise.
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { projectRoot } from '../../shared/kernel/paths.js';

const HERE = fileURLToPath(import.meta.url);
/** The compiled tree's root (.build/) when this file is its compiled copy. */
const BUILD_ROOT = HERE.endsWith('.js') ? join(dirname(HERE), '..', '..') : undefined;

/** The bundled command test/run.mjs builds for a whole-suite run (it loads in a fraction of the per-file tree's time). */
const BUNDLED_CLI = process.env['MAILPATH_TEST_CLI'];

/**
 * Node arguments that run `mailpath <command...>` (the working directory stays the project root: config/ is there):
 * the bundled command in a whole-suite run, for the many tests that start processes to crash, share or restart them.
 */
export function mailpathArgs(...command: string[]): string[] {
  return BUNDLED_CLI ? [BUNDLED_CLI, ...command] : shippedMailpathArgs(...command);
}

/**
 * The command as it ships, module by module (a bundler tolerates what Node does not, e.g. a named import from a
 * CommonJS package whose exports Node cannot detect): for the tests of the command itself (smoke, dev).
 */
export function shippedMailpathArgs(...command: string[]): string[] {
  return BUILD_ROOT ? [join(BUILD_ROOT, 'main', 'cli.js'), ...command] : ['--import', 'tsx', join('main', 'cli.ts'), ...command];
}

/**
 * How a child process imports a source module (path from the project root, e.g. shared/db/embedded.ts): the compiled copy's URL when running compiled, else the
 * .ts file through tsx.
 */
export function childModule(path: string): { url: string; nodeArgs: string[] } {
  return BUILD_ROOT
    ? { url: pathToFileURL(join(BUILD_ROOT, path.replace(/\.ts$/, '.js'))).href, nodeArgs: [] }
    : { url: pathToFileURL(join(projectRoot(), path)).href, nodeArgs: ['--import', 'tsx'] };
}
