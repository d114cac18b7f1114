// Keyset (cursor) pagination shared by every newest-first listing. A cursor names the last row of
// the previous page as (sort timestamp, id); the next page is the rows strictly "before" it in
// (timestamp desc, id desc) order. Unlike OFFSET, rows inserted meanwhile never shift a page.
import { type RawBuilder, type SqlBool, sql } from 'kysely';
import { AppError } from '../../errors.ts';

/** One page of a newest-first listing; pass `nextCursor` back as `cursor` for the next page. */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** `cursor` is opaque; a malformed one is AppError `invalid_request`. `limit` is clamped to 1..100 (default 20). */
export interface PageRequest {
  limit?: number;
  cursor?: string | null;
}

const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

export interface Cursor {
  at: string;
  id: string;
}

export function pageLimit(page: PageRequest | undefined): number {
  const limit = page?.limit ?? DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(limit)) throw new AppError('invalid_request', 'limit must be an integer');
  return Math.min(Math.max(limit, 1), MAX_PAGE_SIZE);
}

function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify([cursor.at, cursor.id]), 'utf8').toString('base64url');
}

export function decodeCursor(text: string | null | undefined): Cursor | null {
  if (text === null || text === undefined || text === '') return null;
  try {
    const value: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value.length === 2 && typeof value[0] === 'string' && typeof value[1] === 'string') {
      return { at: value[0], id: value[1] };
    }
  } catch {
    // fall through: any undecodable cursor is the client's error
  }
  throw new AppError('invalid_request', 'cursor is malformed', { details: { field: 'cursor' } });
}

/** `(column, id) < (cursor.at, cursor.id)`: a row-value comparison both SQLite and PostgreSQL index. */
export function before(column: string, idColumn: string, cursor: Cursor): RawBuilder<SqlBool> {
  return sql<SqlBool>`(${sql.ref(column)}, ${sql.ref(idColumn)}) < (${cursor.at}, ${cursor.id})`;
}

/** Turns `limit + 1` fetched rows into a page (the extra row only proves there is a next page). */
export function toPage<T extends { id: string }>(rows: T[], limit: number, sortValue: (row: T) => string): Page<T> {
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return {
    items,
    nextCursor: rows.length > limit && last !== undefined ? encodeCursor({ at: sortValue(last), id: last.id }) : null,
  };
}

/**
 * Every row of a paged listing, newest first, fetched MAX_PAGE_SIZE at a time; stopping the
 * iteration early fetches no further page.
 */
export async function* allRows<T>(fetch: (page: PageRequest) => Promise<Page<T>>): AsyncGenerator<T> {
  let cursor: string | null = null;
  do {
    const page: Page<T> = await fetch({ limit: MAX_PAGE_SIZE, cursor });
    yield* page.items;
    cursor = page.nextCursor;
  } while (cursor !== null);
}

/** Every row of a paged listing, mapped (for short lists shown whole). */
export async function collectRows<T, U>(fetch: (page: PageRequest) => Promise<Page<T>>, map: (row: T) => U): Promise<U[]> {
  const out: U[] = [];
  for await (const row of allRows(fetch)) out.push(map(row));
  return out;
}

export function nowIso(now: Date = new Date()): string {
  return now.toISOString();
}
