import fs from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { expect } from 'chai';

/**
 * Runs recorded on earlier code replay on the code of today. tests/fixtures/histories holds payments recorded
 * before admission became one step (`admit-in-one`) and before a callback already in ended the wait without a
 * timer, payments and a trade recorded since, whose stage was queried all along (a query that lands while a
 * local activity runs splits the workflow task: see `MonitoringPatch`), and payments admitted in the rail activity
 * that submits them (`admit-with-submission`), one of them after admission failed there and went step by step, and a bulk
 * payout of 50 items through its sliding window (`sliding-window`), 20 in flight, and a later run of a 2,000-item
 * batch that took 13 items in flight from the run before it and concluded and opened items in one step
 * (`conclude-and-open`) until it continued as new, and a payment started as the api starts it today
 * (`processingWhenSeen`) whose rail's callback came with its submission's result, so it upserted `PaygateStatus` once,
 * in the task that settled it. A change that would alter what such a run
 * already did fails here as a nondeterminism error, not in production. They are kept as the server sends them
 * (binary protobuf, `temporal.api.history.v1.History`).
 */
const HISTORIES = path.resolve(__dirname, '..', '..', '..', 'tests', 'fixtures', 'histories');

describe('workflow replay: runs recorded by earlier code', function () {
  this.timeout(60_000);
  const files = fs.readdirSync(HISTORIES).filter((f) => f.endsWith('.binpb'));

  it('then there are recorded runs to replay', () => {
    expect(files).to.have.length.of.at.least(8);
  });

  it("when a payment started `admitWithSubmission` had its first task taken by a worker from before it (which recorded the patch), then today's code replays it", async () => {
    // The recorded run asked the patch; its input is given the field an api of today sets, as a new api's start
    // taken by a worker from before would have it.
    const history = temporal.api.history.v1.History.decode(
      fs.readFileSync(path.join(HISTORIES, 'payment-admit-with-submission-queried.binpb')),
    );
    const started = history.events[0].workflowExecutionStartedEventAttributes;
    const payload = started?.input?.payloads?.[0];
    if (!payload?.data) throw new Error('the recorded run has no input');
    payload.data = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload.data).toString()), admitWithSubmission: true }));
    await Worker.runReplayHistory({ workflowsPath: require.resolve('../../workflows') }, history, 'replay-started-with-submission');
  });

  for (const file of files) {
    it(`when ${file.replace(/\.binpb$/, '').replace(/-/g, ' ')} is replayed, then today's code makes the same decisions`, async () => {
      const history = temporal.api.history.v1.History.decode(fs.readFileSync(path.join(HISTORIES, file)));
      await Worker.runReplayHistory({ workflowsPath: require.resolve('../../workflows') }, history, `replay-${file}`);
    });
  }
});
