// The time zone the workspace schedules in, chosen on the campaign page and kept in this browser (the API stores
// instants, in UTC: a zone is how a person writes and reads them); this browser's own zone until one is chosen.
import { signal } from '@preact/signals';

const STORAGE_KEY = 'mailpath.timeZone';

/** This browser's zone. */
export const BROWSER_ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone;

/** Every zone this browser knows, UTC first. */
export function knownZones(): string[] {
  return ['UTC', ...Intl.supportedValuesOf('timeZone').filter((z) => z !== 'UTC')];
}

function storedZone(): string {
  try {
    const kept = localStorage.getItem(STORAGE_KEY);
    if (kept && knownZones().includes(kept)) return kept;
  } catch {
    // Storage refused (a private window's policy): the browser's zone.
  }
  return BROWSER_ZONE;
}

export const scheduleZone = signal(storedZone());

export function chooseZone(zone: string): void {
  scheduleZone.value = zone;
  try {
    localStorage.setItem(STORAGE_KEY, zone);
  } catch {
    // Kept for this page only.
  }
}

/** How far `zone`'s wall clock is ahead of UTC at `instant` (milliseconds; negative west of Greenwich). */
function offsetAt(instant: number, zone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  }).formatToParts(new Date(instant));
  const part = (type: Intl.DateTimeFormatPartTypes) => Number(parts.find((p) => p.type === type)?.value);
  const wall = Date.UTC(part('year'), part('month') - 1, part('day'), part('hour'), part('minute'), part('second'));
  return wall - Math.floor(instant / 1000) * 1000;
}

/**
 * The instant a wall-clock time (an <input type="datetime-local"> value, YYYY-MM-DDTHH:MM) names in `zone`. The offset
 * is read twice, the second time at the first answer, so a date across a daylight-saving change from today gets its
 * own offset; a time skipped by a change forward lands just after it, as clocks do.
 */
export function zonedInstant(local: string, zone: string): Date {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})$/.exec(local);
  if (!m) throw new Error('Choose a date and a time.');
  const wall = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]));
  const first = wall - offsetAt(wall, zone);
  return new Date(wall - offsetAt(first, zone));
}

/** An instant as `zone`'s wall clock, with the zone's short name. */
export function inZone(iso: string, zone: string): string {
  // dateStyle and timeStyle cannot be combined with timeZoneName: the fields are named one by one.
  return new Date(iso).toLocaleString(undefined, {
    timeZone: zone,
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    hour: 'numeric',
    minute: '2-digit',
    timeZoneName: 'short',
  });
}
