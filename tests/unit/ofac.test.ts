import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { parseOfacCsv } from '../../domain/compliance/ofac';

const FIXTURES = path.resolve(__dirname, '..', '..', '..', 'tests', 'fixtures');

describe('unit: OFAC SDN CSV', () => {
  describe('when the SDN fixture is parsed', () => {
    const listings = parseOfacCsv(fs.readFileSync(path.join(FIXTURES, 'ofac-sdn-sample.csv'), 'utf8'));

    it('then individuals are named first name first, entities and vessels as listed', () => {
      expect(listings.filter((l) => l.type === 'name').map((l) => l.value)).to.deep.equal([
        'Barnabas Idris OKONKWO-LATHAM',
        'ZEPHYRINE MARITIME TRADING LTD.',
        'KAROLINE STAR',
        'Marisol VASQUEZ-ORTEGA',
      ]);
    });

    it('then the identifiers in the remarks are listed with their entry', () => {
      const identifiers = listings.filter((l) => l.type !== 'name').map((l) => [l.type, l.value, l.externalRef]);
      expect(identifiers).to.deep.equal([
        ['email', 'barnabas.ol@example.net', 'sdn:9001'],
        ['crypto_address', 'bc1qfixture0sdn0sample0address000000000', 'sdn:9001'],
        ['national_id', '29918374', 'sdn:9001'],
        ['national_id', 'B7730021', 'sdn:9001'],
        ['phone', '+254 733 900 117', 'sdn:9001'],
        ['email', 'ops@zephyrine-maritime.example', 'sdn:9002'],
        ['national_id', 'P00492811', 'sdn:9004'],
      ]);
    });

    it('then each reason names the list, the kind of party, the program and the entry', () => {
      expect(listings[0].reason).to.equal('OFAC SDN individual, program SDGT (entry 9001)');
      expect(listings.find((l) => l.externalRef === 'sdn:9002')?.reason).to.equal('OFAC SDN entity, program IRAN (entry 9002)');
    });
  });

  describe('when alias rows are parsed', () => {
    it('then each alias is a name pointing at its entry', () => {
      const listings = parseOfacCsv(fs.readFileSync(path.join(FIXTURES, 'ofac-alt-sample.csv'), 'utf8'));
      expect(listings).to.deep.equal([
        { type: 'name', value: 'Barney LATHAM', reason: 'OFAC SDN alias (aka) of entry 9001', externalRef: 'alt:19001' },
        { type: 'name', value: 'ZEPHYRINE SHIPPING COMPANY', reason: 'OFAC SDN alias (fka) of entry 9002', externalRef: 'alt:19002' },
      ]);
    });
  });

  describe('when rows are malformed', () => {
    it('then rows without a numeric entry number, empty names and end-of-file marks are skipped', () => {
      const text = ['ent_num,name', '12,-0- ,individual,X,-0-,-0-,-0-,-0-,-0-,-0-,-0-,-0-', '', '\x1a'].join('\n');
      expect(parseOfacCsv(text)).to.deep.equal([]);
    });
  });
});
