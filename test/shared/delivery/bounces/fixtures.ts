// Loads the sample bounces and feedback reports of test/fixtures/bounces, filling in the placeholders a test computes ({{VERP}} with its own key).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../../../shared/kernel/paths.js';

export const FIXTURE_DIR = join(projectRoot(), 'test', 'fixtures', 'bounces');

export interface FixtureValues {
  /** The VERP bounce address of the send (envelope sender of the original). */
  VERP: string;
  /** The send's Message-ID, without angle brackets. */
  MESSAGE_ID: string;
  /** The send's recipient. */
  RECIPIENT: string;
  /** The feedback-loop address the reports are mailed to. */
  FBL: string;
}

export function fixtureNames(): string[] {
  return readdirSync(FIXTURE_DIR)
    .filter((f) => f.endsWith('.eml'))
    .sort();
}

/** The fixture with every placeholder filled and CRLF line endings, as it would arrive over SMTP. */
export function fixture(name: string, values: FixtureValues): Buffer {
  const text = readFileSync(join(FIXTURE_DIR, name), 'utf8').replace(/\{\{([A-Z_]+)\}\}/g, (whole, key: string) => {
    const value = (values as unknown as Record<string, string>)[key];
    if (value === undefined) throw new Error(`${name}: no value for the placeholder ${whole}`);
    return value;
  });
  return Buffer.from(text.replace(/\r?\n/g, '\r\n'));
}
