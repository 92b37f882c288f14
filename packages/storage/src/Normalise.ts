/**
 * Input values in the form they are stored and hashed in, so that what a chain's hash covers is exactly what
 * PostgreSQL gives back to verification.
 *
 * Event timestamps are stored and hashed as `toISOString()` prints them (UTC, milliseconds). Nearly every emitter
 * already sends that form, and building a Date to print it again cost about half a millisecond per 1000-event batch.
 */

import { mapJsonStrings } from "@kubemend/core/JsonDepth"

// `toISOString()`'s shape for years 0000–9999.
const isoShape = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const daysInMonth = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

const twoDigits = (s: string, at: number) => (s.charCodeAt(at) - 48) * 10 + s.charCodeAt(at + 1) - 48

/** Whether every field is in range: Date rolls `24:00` or 30 February over to another instant, which prints differently. */
const inRange = (ts: string) => {
  const year = twoDigits(ts, 0) * 100 + twoDigits(ts, 2)
  const month = twoDigits(ts, 5)
  const day = twoDigits(ts, 8)
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
  return month >= 1 && month <= 12 && day >= 1 && day <= (month === 2 && leap ? 29 : daysInMonth[month - 1]!) &&
    twoDigits(ts, 11) <= 23 && twoDigits(ts, 14) <= 59 && twoDigits(ts, 17) <= 59
}

/** `new Date(ts).toISOString()` for a timestamp `Date` can read; `ts` itself when it is already that string. */
export const isoTimestamp = (ts: string): string => (isoShape.test(ts) && inRange(ts) ? ts : new Date(ts).toISOString())

/**
 * A string PostgreSQL can store. JSON may carry lone UTF-16 surrogates (`"\\ud800"`), which UTF-8 cannot encode:
 * `text` columns would silently get U+FFFD instead (so the stored event no longer matched its hash) and `jsonb`
 * refuses them. They become U+FFFD before hashing, as Go's encoding/json decodes them.
 */
export const wellFormed = (s: string): string => (s.isWellFormed() ? s : s.toWellFormed())

/** `wellFormed` for an optional field. */
export const wellFormedOptional = <A extends string | null | undefined>(s: A): A => (typeof s === "string" ? wellFormed(s) as A : s)

/** A JSON value with every string, keys included, `wellFormed`. */
export const wellFormedJson = (value: unknown): unknown => mapJsonStrings(value, wellFormed)
