import { randomFillSync } from 'node:crypto';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

/**
 * Random bytes for ids, drawn from the kernel a pool at a time: one `getrandom` call per 409 ids rather than
 * one per id (every request takes one for its request id, every payment one more). Each byte goes to one id only.
 */
const POOL_BYTES = 4096;
const ID_RANDOM_BYTES = 10;
const pool = Buffer.alloc(POOL_BYTES);
let taken = POOL_BYTES;

function randomForId(target: Buffer, at: number): void {
  if (taken + ID_RANDOM_BYTES > POOL_BYTES) {
    randomFillSync(pool);
    taken = 0;
  }
  pool.copy(target, at, taken, taken + ID_RANDOM_BYTES);
  taken += ID_RANDOM_BYTES;
}

/** RFC 9562 UUIDv7: time-ordered, so primary keys and keyset cursors follow creation order. */
export function uuidv7(now: number = Date.now()): string {
  const bytes = Buffer.allocUnsafe(16);
  // 48 bits of Unix milliseconds, big-endian.
  bytes.writeUIntBE(now, 0, 6);
  randomForId(bytes, 6);
  bytes[6] = (bytes[6] & 0x0f) | 0x70;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export const isUuid = (value: string): boolean => UUID.test(value);
