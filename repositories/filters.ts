/**
 * The WHERE clause of a filtered list query, built one optional filter at a time: each condition comes with
 * the values it binds, so a condition and its replacements are never added apart.
 */
export class Conditions {
  private readonly clauses: string[] = [];

  constructor(readonly replacements: Record<string, unknown> = {}) {}

  add(clauses: string | readonly string[], values: Record<string, unknown> = {}): this {
    this.clauses.push(...(typeof clauses === 'string' ? [clauses] : clauses));
    Object.assign(this.replacements, values);
    return this;
  }

  /** `WHERE` and the conditions joined by `AND`; empty when there are none. */
  get where(): string {
    return this.clauses.length > 0 ? `WHERE ${this.clauses.join(' AND ')}` : '';
  }
}

/** An ILIKE pattern matching `text` anywhere, literally: its `\`, `%` and `_` are escaped (with `ESCAPE '\'`). */
export const containing = (text: string): string => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
