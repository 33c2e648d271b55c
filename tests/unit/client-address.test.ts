import { expect } from 'chai';
import { rateLimitKeyOf } from '../../domain/client-address';

describe('unit: the rate-limit key of a client address', () => {
  describe('when the client is IPv4', () => {
    it('then the address itself is the key', () => {
      expect(rateLimitKeyOf('192.0.2.10')).to.equal('192.0.2.10');
    });

    it('then its IPv4-mapped IPv6 form is the same key', () => {
      expect(rateLimitKeyOf('::ffff:192.0.2.10')).to.equal('192.0.2.10');
      expect(rateLimitKeyOf('::FFFF:c000:20a')).to.equal('192.0.2.10');
      expect(rateLimitKeyOf('0:0:0:0:0:ffff:192.0.2.10')).to.equal('192.0.2.10');
    });
  });

  describe('when the client is IPv6', () => {
    it('then addresses in the same /64 share a key, however they are written', () => {
      const key = rateLimitKeyOf('2001:db8:1:2::a');
      expect(key).to.equal('2001:db8:1:2::/64');
      expect(rateLimitKeyOf('2001:0DB8:0001:0002:ffff:ffff:ffff:ffff')).to.equal(key);
      expect(rateLimitKeyOf('2001:db8:1:2:abcd::1')).to.equal(key);
      expect(rateLimitKeyOf('fe80::1%eth0')).to.equal('fe80:0:0:0::/64');
    });

    it('then different /64s have different keys', () => {
      expect(rateLimitKeyOf('2001:db8:1:3::a')).not.to.equal(rateLimitKeyOf('2001:db8:1:2::a'));
      expect(rateLimitKeyOf('2001:db8::1')).to.equal('2001:db8:0:0::/64');
      expect(rateLimitKeyOf('::1')).to.equal('0:0:0:0::/64');
      expect(rateLimitKeyOf('64:ff9b::192.0.2.10')).to.equal('64:ff9b:0:0::/64');
    });
  });

  describe('when the address is unknown or not an address', () => {
    it('then the text is its own key', () => {
      expect(rateLimitKeyOf('unknown')).to.equal('unknown');
    });
  });
});
