// Locates the project root, so assets (config/, migrations, docs) resolve the same from source and from dist/.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

/** The directory holding Mailpath's package.json. */
export function projectRoot(): string {
  if (cached) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 8; i++) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'shared'))) return (cached = dir);
    dir = dirname(dir);
  }
  throw new Error('cannot locate the Mailpath project root');
}
