import { expect } from 'chai';
import {
  BLOCKLIST_TYPES,
  normaliseBlocklistValue,
  normaliseCryptoAddress,
  normaliseName,
  normalisePhone,
  type BlocklistType,
} from '../../domain/compliance/normalise';

describe('unit: compliance normalisation', () => {
  describe('when names are normalised', () => {
    it('then case, spacing and punctuation are folded and the tokens sorted for matching', () => {
      expect(normaliseName('  JOHN   Kamau-Mwangi ')).to.deep.equal({ value: 'john kamau mwangi', matchKey: 'john kamau mwangi' });
      expect(normaliseName('MWANGI, John Kamau')).to.deep.equal({ value: 'mwangi john kamau', matchKey: 'john kamau mwangi' });
    });

    it('then accents are folded and honorifics and legal forms dropped', () => {
      expect(normaliseName('José Álvarez Núñez')?.value).to.equal('jose alvarez nunez');
      expect(normaliseName('Dr. John Kamau')?.value).to.equal('john kamau');
      expect(normaliseName('ACME Trading Ltd.')?.matchKey).to.equal(normaliseName('Acme Trading Limited')?.matchKey);
    });

    it('then a name made only of stop words keeps them, and one letter is not a name', () => {
      expect(normaliseName('The Company Ltd')?.value).to.equal('the');
      expect(normaliseName('Limited')?.value).to.equal('limited');
      expect(normaliseName('J')).to.equal(null);
      expect(normaliseName(' -- ')).to.equal(null);
    });
  });

  describe('when phones are normalised', () => {
    const cases: [string, string | null][] = [
      ['0712 345 678', '+254712345678'],
      ['254712345678', '+254712345678'],
      ['+44 20 7946 0958', '+442079460958'],
      ['0044 20 7946 0958', '+442079460958'],
      ['+1 (415) 555-0123', '+14155550123'],
      ['12345', null],
      ['phone', null],
    ];
    for (const [raw, expected] of cases) {
      it(`then "${raw}" is ${expected ?? 'refused'}`, () => {
        expect(normalisePhone(raw)).to.equal(expected);
      });
    }
  });

  describe('when every type normalises a typical value', () => {
    const cases: [BlocklistType, string, string | null][] = [
      ['email', '  Fraud@Example.COM ', 'fraud@example.com'],
      ['email', 'not-an-email', null],
      ['national_id', '12-345 678', '12345678'],
      ['national_id', 'ak 0123456', 'AK0123456'],
      ['national_id', '12', null],
      ['bank_account', '0123-4567-8901', '012345678901'],
      ['bank_account', 'GB33 BUKB 2020 1555 5555 55', 'GB33BUKB20201555555555'],
      ['country', ' ke ', 'KE'],
      ['country', 'Kenya', null],
      ['crypto_address', '0xABCDEF0123456789abcdef0123456789ABCDEF01', '0xabcdef0123456789abcdef0123456789abcdef01'],
      ['crypto_address', 'BC1QAR0SRRR7XFKVY5L643LYDNW9RE59GTZZWF5MDQ', 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq'],
      ['crypto_address', 'short', null],
    ];
    for (const [type, raw, expected] of cases) {
      it(`then ${type} "${raw}" is ${expected ?? 'refused'}`, () => {
        expect(normaliseBlocklistValue(type, raw)?.value ?? null).to.equal(expected);
      });
    }

    it('then base58 addresses keep their case, which is significant', () => {
      expect(normaliseCryptoAddress('1BoatSLRHtKNngkdXEeobR76b53LETtpyT')).to.equal('1BoatSLRHtKNngkdXEeobR76b53LETtpyT');
    });

    it('then the match key of every type but name is the value itself', () => {
      const samples: Record<BlocklistType, string> = {
        name: 'Kamau John',
        email: 'a@example.com',
        phone: '0712345678',
        national_id: '12345678',
        bank_account: '0123456789',
        crypto_address: '0x0123456789abcdef0123456789abcdef01234567',
        country: 'KE',
      };
      for (const type of BLOCKLIST_TYPES) {
        const normalised = normaliseBlocklistValue(type, samples[type])!;
        if (type === 'name') expect(normalised.matchKey).to.equal('john kamau');
        else expect(normalised.matchKey, type).to.equal(normalised.value);
      }
    });
  });
});
