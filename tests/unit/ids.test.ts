import { expect } from 'chai';
import { isUuid, uuidv7 } from '../../platform/ids';

/** The random part of a UUIDv7: its 74 random bits, as hex, without the version and variant bits. */
const randomPart = (id: string): string => {
  const hex = id.replace(/-/g, '');
  return `${hex.slice(13, 16)}${(parseInt(hex[16], 16) & 0x3).toString(16)}${hex.slice(17)}`;
};

describe('unit: ids', () => {
  describe('when an id is made at a given moment', () => {
    it('then it is a version 7, RFC 9562 variant UUID whose first 48 bits are that moment in milliseconds', () => {
      const at = Date.UTC(2026, 10, 28, 9, 30, 15, 123);
      const id = uuidv7(at);
      expect(isUuid(id)).to.equal(true);
      expect(id[14]).to.equal('7');
      expect(['8', '9', 'a', 'b']).to.include(id[19]);
      expect(parseInt(id.replace(/-/g, '').slice(0, 12), 16)).to.equal(at);
    });

    it('then ids of later moments sort after it, as keyset cursors need', () => {
      const at = Date.UTC(2026, 10, 28);
      const ids = [at + 1, at, at + 86_400_000, at + 2].map((ms) => uuidv7(ms));
      expect([...ids].sort()).to.deep.equal([ids[1], ids[0], ids[3], ids[2]]);
    });
  });

  describe('when many ids are made in the same millisecond, past several refills of the random pool', () => {
    it('then no two share their random part', () => {
      const at = Date.now();
      const ids = Array.from({ length: 5_000 }, () => uuidv7(at));
      expect(new Set(ids).size).to.equal(ids.length);
      expect(new Set(ids.map(randomPart)).size).to.equal(ids.length);
    });

    it('then the random parts are not all zero or all alike (the pool is filled, not left empty)', () => {
      const parts = Array.from({ length: 1_000 }, () => randomPart(uuidv7(0)));
      expect(parts.filter((p) => /^0+$/.test(p))).to.deep.equal([]);
      // Each hex digit of 1,000 random parts shows up; an empty or constant pool would show one.
      expect(new Set(parts.join('')).size).to.equal(16);
    });
  });
});
