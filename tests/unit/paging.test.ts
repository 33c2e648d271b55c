import { expect } from 'chai';
import { AppError } from '../../platform/errors';
import { uuidv7 } from '../../platform/ids';
import { decodeCursor, encodeCursor, pageLimit } from '../../services/paging';

function expectFieldError(fn: () => unknown, field: string): void {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(AppError);
    expect((err as AppError).code).to.equal('validation_failed');
    expect((err as AppError).options.errors?.map((e) => e.field)).to.deep.equal([field]);
    return;
  }
  expect.fail(`expected a validation error on ${field}`);
}

describe('unit: paging', () => {
  describe('when a cursor is encoded', () => {
    it('then it is opaque, URL-safe and decodes to the same id', () => {
      const id = uuidv7();
      const cursor = encodeCursor(id);
      expect(cursor).to.match(/^[A-Za-z0-9_-]+$/);
      expect(cursor).not.to.include(id);
      expect(decodeCursor(cursor)).to.equal(id);
    });
  });

  describe('when a cursor was not made by the api', () => {
    const bad: [string, string][] = [
      ['garbage', 'not-a-cursor'],
      ['an empty string', ''],
      ['a raw UUID', '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b'],
      ['a wrong version', Buffer.from('v2:0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b').toString('base64url')],
      ['a version with a non-UUID', Buffer.from("v1:1' OR '1'='1").toString('base64url')],
      ['a UUID with trailing text', Buffer.from('v1:0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5bXX').toString('base64url')],
    ];
    for (const [what, cursor] of bad) {
      it(`then ${what} is a validation error on cursor`, () => {
        expectFieldError(() => decodeCursor(cursor), 'cursor');
      });
    }
  });

  describe('when a page size is asked for', () => {
    it('then it defaults to 20 and allows 1 to 100', () => {
      expect(pageLimit(undefined)).to.equal(20);
      expect(pageLimit(1)).to.equal(1);
      expect(pageLimit(100)).to.equal(100);
    });

    for (const limit of [0, 101, -1, 2.5, Number.NaN]) {
      it(`then ${limit} is a validation error on limit`, () => {
        expectFieldError(() => pageLimit(limit), 'limit');
      });
    }
  });
});
