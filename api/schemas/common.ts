// Schemas shared by several routes.
import { z } from 'zod';
import { CALENDAR_DATE_SHAPE, isCalendarDate } from '../../shared/kernel/calendar-date.js';

export const idParam = <K extends string>(name: K) => z.object({ [name]: z.string().max(64).describe('Identifier') } as Record<K, z.ZodString>);

export const pagination = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50).describe('Page size, 1..200'),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
});

export const timestamp = z.iso.datetime().describe('RFC 3339 timestamp (UTC)');

/** A UTC calendar day, YYYY-MM-DD (2026-02-30 is refused, not rolled over to March). */
export const calendarDate = z
  .string()
  .regex(CALENDAR_DATE_SHAPE, 'must be a date YYYY-MM-DD')
  .refine(isCalendarDate, 'must be a calendar date (no 2026-02-30)')
  .describe('UTC day, YYYY-MM-DD');

export const statusResult = z.object({ status: z.string() });

export function iso(date: Date): string;
export function iso(date: Date | null): string | null;
export function iso(date: Date | null): string | null {
  return date ? date.toISOString() : null;
}

/** ?after=<cursor>&limit= for cursor lists (the cursor is next_cursor of the previous page). */
export const cursorPagination = z.object({
  after: z.string().max(200).optional().describe('next_cursor of the previous page'),
  limit: z.coerce.number().int().min(1).max(200).default(50).describe('Page size, 1..200'),
});

/** A boolean query flag: true/false (also 1/0). */
export const queryFlag = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');
