// Values generated once and kept in the data dir (JWT secret, self-signed certificate), so restarts reuse them.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Reads dataDir/name, creating it with generate() on first use (mode 0600: these are secrets). */
export async function loadOrCreate(dataDir: string, name: string, generate: () => string | Promise<string>): Promise<string> {
  const file = join(dataDir, name);
  if (existsSync(file)) return readFileSync(file, 'utf8');
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const value = await generate();
  // 'wx' makes a concurrent second writer fail instead of overwriting; it then reads the winner's value.
  try {
    writeFileSync(file, value, { mode: 0o600, flag: 'wx' });
    return value;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return readFileSync(file, 'utf8');
    throw err;
  }
}
