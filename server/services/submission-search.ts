import { type SQL, sql } from 'drizzle-orm';
import { submissions } from '../db/schema.js';

/**
 * The words of `q`: runs of letters and digits, lowercased, each once. Punctuation separates
 * words and is never searched, so `q` that is only punctuation has no word and matches nothing.
 */
export function searchWords(q: string): string[] {
  return [...new Set(q.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])];
}

/** `%`, `_` and `\` are LIKE's own characters: matched literally. */
const likeLiteral = (s: string) => s.replace(/[\\%_]/g, (ch) => `\\${ch}`);

/** The search text of a row the indexer has not reached yet, computed as the indexer would write it. */
const liveText = sql`formsvc_search_text(${submissions.id}, ${submissions.data})`;

/**
 * Rows whose search text holds every pattern: indexed rows through the pg_trgm index on
 * search_text, and the few rows the worker's indexer has not reached yet (search_text null, found
 * by their own partial index) by computing the same text on the fly.
 */
function textHolds(patterns: string[]): SQL {
  const all = (text: SQL | typeof submissions.searchText) =>
    sql.join(
      patterns.map((p) => sql`${text} like ${p}`),
      sql` and `,
    );
  return sql`((${all(submissions.searchText)}) or (${submissions.searchText} is null and ${all(liveText)}))`;
}

/**
 * `q`: every word occurs in the search text (the id and the data's strings and numbers, lowercased).
 * Each word is one `LIKE '%word%'`.
 */
export function searchCondition(q: string): SQL {
  const words = searchWords(q);
  if (!words.length) return sql`false`;
  return textHolds(words.map((w) => `%${likeLiteral(w)}%`));
}

/**
 * Submissions whose data holds the address `email` as a value of any field at any
 * depth, compared trimmed and case-insensitively. The index narrows by substring; the exact
 * comparison of each string value decides.
 */
export function addressCondition(email: string): SQL {
  const address = email.trim().toLowerCase();
  return sql`(${textHolds([`%${likeLiteral(address)}%`])} and exists (
    select 1 from jsonb_path_query(${submissions.data}, 'strict $.** ? (@.type() == "string")') v
    where lower(btrim(v #>> '{}', E' \t\r\n')) = ${address}))`;
}

/** The conditions of the `q` and `email` filters (none when neither is given). */
export function searchConditions(filter: { q?: string; email?: string }): SQL[] {
  const conds: SQL[] = [];
  // A blank q (an empty search box) filters nothing; punctuation alone is a search for no word.
  if (filter.q !== undefined && filter.q.trim() !== '') conds.push(searchCondition(filter.q));
  if (filter.email !== undefined) conds.push(addressCondition(filter.email));
  return conds;
}
