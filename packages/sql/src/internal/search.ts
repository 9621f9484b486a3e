/**
 * Literal substring search with `LIKE`: the term's wildcards are escaped, so `50%` finds "50%" and
 * not "500". Both sides are folded with PostgreSQL's `lower()` by the caller, so that the column and
 * the term fold alike and a trigram index on `lower(column)` can serve the search.
 *
 * @internal
 */

/** A `LIKE` pattern (default escape character `\`) matching any text that contains `term`. */
export const likeContaining = (term: string): string => `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`
