import { z } from 'zod';

/**
 * A string argument PostgreSQL can store exactly: at most `max` characters
 * (UTF-16 code units; at least `min`, default 1), without U+0000 (a `text`
 * column refuses it) and without lone surrogates (UTF-8 would store them as
 * U+FFFD, so the row would not hold what was sent). Refused up front with
 * `-32602` naming the argument, never an HTTP 500 from the database.
 */
export function storableText(max: number, min = 1) {
  return z
    .string()
    .min(min)
    .max(max)
    .refine((s) => !s.includes('\u0000'), 'must not contain U+0000 (NUL)')
    .refine((s) => s.isWellFormed(), 'must be well-formed Unicode (no lone surrogates)');
}
