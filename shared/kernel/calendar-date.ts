// Calendar days as YYYY-MM-DD: the one check for a day named in a path, a query or a field value.
/** The shape (documented as the pattern of such parameters); isCalendarDate also checks the day exists. */
export const CALENDAR_DATE_SHAPE = /^\d{4}-\d{2}-\d{2}$/;

/**
 * True for a real UTC calendar day. The shape alone is not enough: `new Date('2026-13-45T00:00:00Z')` is an
 * Invalid Date (toISOString throws, a 500) and `new Date('2026-02-30T00:00:00Z')` silently rolls over to 2 March.
 */
export function isCalendarDate(text: string): boolean {
  if (!CALENDAR_DATE_SHAPE.test(text)) return false;
  const [y, mo, d] = [Number(text.slice(0, 4)), Number(text.slice(5, 7)), Number(text.slice(8, 10))];
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d); // not Date.UTC: it reads years 0..99 as 1900..1999
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}
