import { expect } from 'chai';
import { normaliseKenyanPhone } from '../../domain/phone';

describe('unit: phone', () => {
  describe('when a Kenyan number is given in any common form', () => {
    const cases: [string, string][] = [
      ['+254712345678', '+254712345678'],
      ['254712345678', '+254712345678'],
      ['0712345678', '+254712345678'],
      ['0712 345 678', '+254712345678'],
      ['+254 (712) 345-678', '+254712345678'],
      ['0110123456', '+254110123456'],
      ['+254110123456', '+254110123456'],
    ];
    for (const [raw, e164] of cases) {
      it(`then "${raw}" normalises to ${e164}`, () => {
        expect(normaliseKenyanPhone(raw)).to.equal(e164);
      });
    }
  });

  describe('when the input is not a Kenyan mobile number', () => {
    const cases: [string, string][] = [
      ['an empty string', ''],
      ['too short', '12345'],
      ['one digit short', '071234567'],
      ['one digit long', '07123456789'],
      ['another country', '+255712345678'],
      ['a US number', '+14155550123'],
      ['a landline prefix', '0201234567'],
      ['a prefix that is neither 7 nor 1', '0812345678'],
      ['letters', '07123456ab'],
      ['a double plus', '++254712345678'],
      ['a trailing extension', '+254712345678x1'],
      ['a dot separator', '0712.345.678'],
    ];
    for (const [what, raw] of cases) {
      it(`then ${what} is null`, () => {
        expect(normaliseKenyanPhone(raw)).to.equal(null);
      });
    }
  });
});
