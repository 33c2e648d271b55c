import { expect } from 'chai';
import { ownInterest, ownInterestMessage, screenedValueParty } from '../../domain/own-interest';

describe('unit: own interest in a staff decision', () => {
  const officer = {
    userId: 'officer',
    name: 'Dr. Jane Wanjiru Kamau',
    phone: '+254711000222',
    email: 'Jane.Kamau@example.com',
    idNumber: '2345 6789',
  };

  describe('when a party is the officer, or shares a name, phone, e-mail or ID number with them', () => {
    it('then the shared field is named, whatever the form it was written in', () => {
      expect(ownInterest(officer, [{ role: 'payer', userId: 'officer' }])).to.deep.equal({ role: 'payer', field: 'account' });
      expect(ownInterest(officer, [{ role: 'payee', name: 'kamau jane WANJIRU' }])).to.deep.equal({ role: 'payee', field: 'name' });
      expect(ownInterest(officer, [{ role: 'customer under review', phone: '0711 000 222' }])).to.deep.equal({
        role: 'customer under review',
        field: 'phone',
      });
      expect(ownInterest(officer, [{ role: 'appellant', email: ' jane.kamau@EXAMPLE.com ' }])).to.deep.equal({
        role: 'appellant',
        field: 'email',
      });
      expect(ownInterest(officer, [{ role: 'payer', idNumber: '23456789' }])).to.deep.equal({ role: 'payer', field: 'id_number' });
      expect(ownInterest(officer, [screenedValueParty('+254711000222')])).to.deep.equal({ role: 'screened value', field: 'phone' });
    });

    it('then the refusal says which party and what is shared, never the value', () => {
      const message = ownInterestMessage({ role: 'payee', field: 'id_number' }, 'an appeal');
      expect(message).to.equal('nobody decides an appeal in which they have an own interest: the payee shares your id number');
      expect(message).to.not.include('2345');
    });
  });

  describe('when no party shares anything with the officer', () => {
    it('then there is no own interest, and unknown fields never match each other', () => {
      expect(
        ownInterest(officer, [
          { role: 'payer', userId: 'someone', name: 'Jane Kamau', phone: '+254722000333', email: 'jk@example.com', idNumber: null },
          { role: 'payee', name: null, phone: null },
          screenedValueParty('Wanjiru Kamau'),
        ]),
      ).to.equal(null);
      expect(ownInterest({ userId: 'blank' }, [{ role: 'payee' }])).to.equal(null);
    });
  });
});
