import { expect } from 'chai';
import { Screener, type BlocklistChange } from '../../domain/compliance/screening';

/**
 * A screening read carries the blocklist's version (generation and purges) from the same statement as the order:
 * a screener that already holds that version screens without asking the list what changed; any other version
 * makes it refresh first, as a screening without one always does.
 */

const thresholds = { nameThreshold: 0.92, reviewThreshold: 0.88 };

function entry(id: string, phone: string): Omit<BlocklistChange, 'state_generation' | 'state_purges'> {
  return { id, type: 'phone', value: phone, match_key: phone, source: 'manual', external_ref: null, expires_at: null };
}

/** A change feed over a list in memory that counts how often it is asked. */
function feed() {
  const list = {
    generation: 1n,
    purges: 0n,
    entries: [{ ...entry('00000000-0000-4000-8000-000000000001', '+254711000001'), generation: 1n }],
    asked: 0,
  };
  const changesSince = (since: bigint): Promise<BlocklistChange[]> => {
    list.asked += 1;
    const state = { state_generation: String(list.generation), state_purges: String(list.purges) };
    const rows = list.entries.filter((e) => since < 0n || e.generation > since).map(({ generation: _g, ...e }) => ({ ...state, ...e }));
    return Promise.resolve(
      rows.length > 0 ? rows : [{ ...state, ...entry('', ''), id: null, type: 'phone' as const, value: '', match_key: '' }],
    );
  };
  return { list, screener: new Screener(changesSince, thresholds) };
}

const phone = (value: string) => [{ field: 'destination.phone', type: 'phone' as const, value }];

describe('screening against the version read with the order', () => {
  it('when the screener holds the version the read saw, then it screens without asking the list', async () => {
    const { list, screener } = feed();
    await screener.refresh();
    const asked = list.asked;

    const matches = await screener.screen(phone('+254711000001'), { generation: 1n, purges: 0n });

    expect(matches.map((m) => m.verdict)).to.deep.equal(['block']);
    expect(list.asked).to.equal(asked);
  });

  it('when an entry was added since the screener last looked, then it refreshes and the new entry matches', async () => {
    const { list, screener } = feed();
    await screener.refresh();
    list.generation = 2n;
    list.entries.push({ ...entry('00000000-0000-4000-8000-000000000002', '+254711000002'), generation: 2n });
    const asked = list.asked;

    const matches = await screener.screen(phone('+254711000002'), { generation: 2n, purges: 0n });

    expect(matches.map((m) => m.entryId)).to.deep.equal(['00000000-0000-4000-8000-000000000002']);
    expect(list.asked).to.be.greaterThan(asked);
  });

  it('when an entry was deleted (a purge, the generation moved too), then the screener reloads and it no longer matches', async () => {
    const { list, screener } = feed();
    await screener.refresh();
    list.entries = [];
    list.generation = 2n;
    list.purges = 1n;

    const matches = await screener.screen(phone('+254711000001'), { generation: 2n, purges: 1n });

    expect(matches).to.deep.equal([]);
  });

  it('when the screener has never loaded the list, then a read version does not stand in for it', async () => {
    const { list, screener } = feed();

    const matches = await screener.screen(phone('+254711000001'), { generation: 1n, purges: 0n });

    expect(matches.map((m) => m.verdict)).to.deep.equal(['block']);
    expect(list.asked).to.be.greaterThan(0);
  });

  it('when no version is given, then it refreshes before every screening, as before', async () => {
    const { list, screener } = feed();
    await screener.refresh();
    const asked = list.asked;

    await screener.screen(phone('+254711000009'));

    expect(list.asked).to.equal(asked + 1);
  });
});
