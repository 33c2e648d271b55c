import type { Migration } from '../migrator';

/**
 * Two indexes that repeated their table's primary key: `orders_id_desc` and `blocklist_entries_id_desc`, each on
 * `(id DESC)`. A B-tree is read backwards as cheaply as forwards, so "newest first" pages (`ORDER BY id DESC`, with
 * or without a keyset cursor `id < …`) go through the primary key alone. Every accepted order, every bulk payout
 * item and every listed name wrote to the repeated index as well, for no read that needed it.
 *
 * Taken back, both indexes are made again.
 */
export const up: Migration = async ({ context: sql }) => {
  await sql.query(`
    DROP INDEX orders_id_desc;
    DROP INDEX blocklist_entries_id_desc;
  `);
};

export const down: Migration = async ({ context: sql }) => {
  await sql.query(`
    CREATE INDEX orders_id_desc ON orders (id DESC);
    CREATE INDEX blocklist_entries_id_desc ON blocklist_entries (id DESC);
  `);
};
