// The one calendar-day check: real days only (leap years, month lengths), the exact YYYY-MM-DD shape, years below 100 kept.
import t from 'tap';
import { isCalendarDate } from '../../../shared/kernel/calendar-date.js';

t.test('real UTC calendar days pass, impossible ones and other shapes do not', async (t) => {
  for (const ok of ['2026-01-31', '2026-02-28', '2028-02-29', '2000-02-29', '2026-12-31', '0050-03-01']) t.ok(isCalendarDate(ok), ok);
  for (const bad of [
    '2026-13-45',
    '2026-00-10',
    '2026-12-32',
    '2026-02-30',
    '2026-02-29',
    '1900-02-29',
    '2026-04-31',
    '2026-01-00',
    '2026-5-4',
    '2026-05-04T00:00:00Z',
    ' 2026-05-04',
    '',
  ]) {
    t.notOk(isCalendarDate(bad), JSON.stringify(bad));
  }
});
