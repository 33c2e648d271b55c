import { expect } from 'chai';
import { RAIL_CALL, withNonRetryable } from '../../workflows/presets';
import { RAIL_HEARTBEAT_EVERY_MS } from '../../workflows/activities/heartbeat';

const seconds = (duration: string): number => Number(/^(\d+)s$/.exec(duration)?.[1] ?? NaN);

describe('unit: activity presets', () => {
  describe('when a worker dies during a rail call', () => {
    it('then the call has a heartbeat timeout of a few seconds, a few beats long, well under its start-to-close timeout', () => {
      expect(RAIL_CALL.heartbeatTimeout).to.be.a('string');
      const heartbeat = seconds(RAIL_CALL.heartbeatTimeout);
      expect(heartbeat).to.be.within(2, 10);
      expect(heartbeat * 1000).to.be.at.least(3 * RAIL_HEARTBEAT_EVERY_MS);
      expect(heartbeat).to.be.below(seconds(RAIL_CALL.startToCloseTimeout));
    });

    it('then a preset with extra final error types keeps the heartbeat timeout', () => {
      expect(withNonRetryable(RAIL_CALL, ['TradeNotFound']).heartbeatTimeout).to.equal(RAIL_CALL.heartbeatTimeout);
    });
  });
});
