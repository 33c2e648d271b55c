import { expect } from 'chai';
import { redactUrl } from '../../platform/log-redaction';

describe('unit: log redaction', () => {
  describe('when a URL is logged', () => {
    it('then the callback and dashboard routes lose their whole query', () => {
      expect(redactUrl('/api/v1/callbacks/mpesa/b2c/0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b/result?token=s3cret')).to.equal(
        '/api/v1/callbacks/mpesa/b2c/0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b/result?[redacted]',
      );
      expect(redactUrl('/admin/queues?access_token=eyJ.x.y&status=failed')).to.equal('/admin/queues?[redacted]');
      expect(redactUrl('/admin/queues/api/queues?page=1')).to.equal('/admin/queues/api/queues?[redacted]');
    });

    it('then elsewhere only parameters named like credentials are redacted', () => {
      expect(redactUrl('/api/v1/orders?limit=5&access_token=a&api_key=b&Signature=c&code=d&client_secret=e&cursor=f')).to.equal(
        '/api/v1/orders?limit=5&access_token=[redacted]&api_key=[redacted]&Signature=[redacted]&code=[redacted]&client_secret=[redacted]&cursor=f',
      );
      expect(redactUrl('/x?pass%77ord=hunter2')).to.equal('/x?pass%77ord=[redacted]');
    });

    it('then a URL without a query is unchanged', () => {
      expect(redactUrl('/api/v1/users/me')).to.equal('/api/v1/users/me');
    });
  });
});
