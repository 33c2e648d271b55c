import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { parseEuSanctionsXml, parseUnConsolidatedXml } from '../../domain/compliance/sanctions-lists';

const FIXTURES = path.resolve(__dirname, '..', '..', '..', 'tests', 'fixtures');
const read = (file: string) => fs.readFileSync(path.join(FIXTURES, file), 'utf8');

describe('unit: UN and EU sanctions lists', () => {
  describe('when the UN consolidated list fixture is parsed', () => {
    const listings = parseUnConsolidatedXml(read('un-consolidated-sample.xml'));

    it('then every name, original-script name and alias is listed with its entry', () => {
      expect(listings.filter((l) => l.type === 'name').map((l) => [l.value, l.externalRef])).to.deep.equal([
        ['Viktor Petrovich Ivanov', 'un:7100001'],
        ['Виктор Петрович Иванов', 'un:7100001'],
        ['Viktor Ivanoff', 'un:7100001'],
        ['Hamza bin Tariq al-Zahrani', 'un:7100002'],
        ['حمزة بن طارق الزهراني', 'un:7100002'],
        ['Abu Tariq', 'un:7100002'],
        ['Zhao Guoqiang', 'un:7100003'],
        ['赵国强', 'un:7100003'],
        ['Korea Ryonbong General Fixture Corporation', 'un:7200001'],
        ['Ryonbong Fixture Trading', 'un:7200001'],
      ]);
    });

    it('then passports and national identity numbers are listed, other documents are not', () => {
      expect(listings.filter((l) => l.type === 'national_id').map((l) => l.value)).to.deep.equal(['745120931', '1099283746']);
    });

    it('then each reason names the list, the programme and the reference number', () => {
      expect(listings[0].reason).to.equal('UN Security Council consolidated list individual, DPRK (KPi.901)');
    });
  });

  describe('when the EU list fixture is parsed', () => {
    const listings = parseEuSanctionsXml(read('eu-sanctions-sample.xml'));

    it('then each name alias is listed once, in every script it is printed in', () => {
      expect(listings.filter((l) => l.type === 'name').map((l) => [l.value, l.externalRef])).to.deep.equal([
        ['Yevgeniy Viktorovich Prigozhin', 'eu:880001'],
        ['Евгений Викторович Пригожин', 'eu:880001'],
        ['Maher al-Khatib', 'eu:880002'],
        ['ماهر الخطيب', 'eu:880002'],
        ['Fixture Shenzhen Components Co. Ltd', 'eu:880003'],
        ['深圳测试元件有限公司', 'eu:880003'],
      ]);
      expect(listings.filter((l) => l.type === 'national_id').map((l) => l.value)).to.deep.equal(['720055117']);
      expect(listings[1].reason).to.equal('EU financial sanctions list person, programme RUS (EU.9001.01), name (RU)');
    });
  });

  describe('when a file is not the list it is configured as', () => {
    it('then parsing fails instead of importing an empty list', () => {
      expect(() => parseUnConsolidatedXml('<html/>')).to.throw(/not a UN consolidated list/);
      expect(() => parseEuSanctionsXml(read('un-consolidated-sample.xml'))).to.throw(/not an EU financial sanctions list/);
    });
  });
});
