import { expect } from 'chai';
import { NameIndex, nameScore, type CandidateFilter, type IndexedName } from '../../domain/compliance/name-index';
import { foldName } from '../../domain/compliance/transliterate';
import { normaliseName } from '../../domain/compliance/normalise';
import { buildLabelledSet } from '../support/labelled-names';
import { prng } from '../support/random';

const SYLLABLES = ['ka', 'ma', 'wa', 'ngi', 'jo', 'hn', 'ot', 'ie', 'no', 'ach', 'ie', 'ng', 'mu', 'ri', 'uki', 'ke', 'ny', 'an', 'zi'];

function randomName(next: () => number): string {
  const tokens = 1 + Math.floor(next() * 3);
  return Array.from({ length: tokens }, () => {
    const parts = 1 + Math.floor(next() * 3);
    return Array.from({ length: parts }, () => SYLLABLES[Math.floor(next() * SYLLABLES.length)]).join('');
  }).join(' ');
}

const indexed = (raw: string) => foldName(normaliseName(raw)!.value)!;

/** What the index finds is what scoring every name would find. */
function expectSameAsFullScan(index: NameIndex<number>, names: IndexedName[], query: IndexedName, threshold: number): void {
  const expected = names
    .map((n, i) => ({ i, score: nameScore(query, n) }))
    .filter((m) => m.score >= threshold)
    .map((m) => m.i)
    .sort((a, b) => a - b);
  const found = index
    .search(query, threshold)
    .map((m) => m.payload)
    .sort((a, b) => a - b);
  expect(found, query.plain).to.deep.equal(expected);
}

describe('unit: name index', () => {
  describe('when a blocklisted name is searched with one letter missing', () => {
    it('then it is found, and an unrelated name is not', () => {
      const index = new NameIndex<string>();
      index.upsert('target', indexed('John Kamau Mwangi'), 'target');
      const next = prng(7);
      for (let i = 0; i < 2000; i++) index.upsert(`n${i}`, indexed(randomName(next)), `n${i}`);

      const hits = index.search(indexed('Jon Kamau Mwangi'), 0.92);
      expect(hits.map((h) => h.id)).to.include('target');
      expect(hits[0].score).to.be.greaterThan(0.92);
      expect(index.search(indexed('Grace Atieno Odhiambo'), 0.92).map((h) => h.id)).to.not.include('target');
    });

    it('then a first-letter typo is caught by the original-order score', () => {
      const index = new NameIndex<string>();
      index.upsert('target', indexed('John Kamau Mwangi'), 'target');
      // "awangi" sorts first: the token-sorted forms differ from the start, the natural order only at the end.
      expect(index.search(indexed('John Kamau Awangi'), 0.92).map((h) => h.id)).to.deep.equal(['target']);
    });
  });

  const filters: CandidateFilter[] = ['scan', 'vocabulary', 'auto'];

  describe('when random names are searched', () => {
    for (const filter of filters) {
      for (const threshold of [0.85, 0.92]) {
        it(`then the ${filter} filter never drops a match a full scan finds (threshold ${threshold})`, () => {
          const next = prng(threshold * 1000);
          const names = Array.from({ length: 600 }, () => indexed(randomName(next)));
          const index = new NameIndex<number>(filter);
          names.forEach((n, i) => index.upsert(String(i), n, i));
          for (let q = 0; q < 150; q++) expectSameAsFullScan(index, names, indexed(randomName(next)), threshold);
        });
      }
    }
  });

  describe('when names of every script are searched', () => {
    for (const filter of filters) {
      for (const threshold of [0.7, 0.88, 0.92]) {
        it(`then the ${filter} filter never drops a match a full scan finds (threshold ${threshold})`, () => {
          const set = buildLabelledSet(threshold * 100, { latin: 300, russian: 150, arabic: 150, chinese: 100, negativesPerCulture: 40 });
          const names = set.listed.map((l) => indexed(l.name));
          const index = new NameIndex<number>(filter);
          names.forEach((n, i) => index.upsert(String(i), n, i));
          for (const probe of set.probes.slice(0, 400)) expectSameAsFullScan(index, names, indexed(probe.name), threshold);
        });
      }
    }
  });

  describe('when names are removed and added between searches', () => {
    it('then the vocabulary filter still finds what a full scan finds', () => {
      const next = prng(11);
      const names = Array.from({ length: 400 }, () => indexed(randomName(next)));
      const index = new NameIndex<number>('vocabulary');
      names.forEach((n, i) => index.upsert(String(i), n, i));
      const live = new Map(names.map((n, i) => [i, n]));
      for (let round = 0; round < 60; round++) {
        const victim = Math.floor(next() * names.length);
        index.remove(String(victim));
        live.delete(victim);
        const renamed = indexed(randomName(next));
        const target = Math.floor(next() * names.length);
        index.upsert(String(target), renamed, target);
        live.set(target, renamed);
        const query = indexed(randomName(next));
        const expected = [...live]
          .filter(([, n]) => nameScore(query, n) >= 0.85)
          .map(([i]) => i)
          .sort((a, b) => a - b);
        const found = index
          .search(query, 0.85)
          .map((m) => m.payload)
          .sort((a, b) => a - b);
        expect(found, query.plain).to.deep.equal(expected);
      }
    });
  });

  describe('when a name in Arabic script is listed, removed and listed again', () => {
    it('then a Latin spelling finds it by its skeleton only while it is listed', () => {
      const index = new NameIndex<string>('vocabulary');
      index.upsert('arabic', indexed('قاسم سليماني'), 'arabic');
      index.upsert('latin', indexed('Kasim Salim'), 'latin');
      const query = indexed('Qasem Soleimani');
      expect(index.search(query, 0.88).map((m) => m.id)).to.include('arabic');
      index.remove('arabic');
      expect(index.search(query, 0.88).map((m) => m.id)).to.not.include('arabic');
      index.upsert('arabic', indexed('قاسم سليماني'), 'arabic');
      expect(index.search(query, 0.88).map((m) => m.id)).to.include('arabic');
    });
  });

  describe('when entries change', () => {
    it('then an upsert replaces, a removal forgets, and the accept filter skips', () => {
      const index = new NameIndex<{ active: boolean }>();
      index.upsert('a', indexed('John Kamau Mwangi'), { active: true });
      index.upsert('b', indexed('Peter Otieno'), { active: true });
      index.upsert('a', indexed('John Kamau Mwangi'), { active: false });
      expect(index.size).to.equal(2);
      expect(index.search(indexed('John Kamau Mwangi'), 0.92, (p) => p.active)).to.deep.equal([]);
      index.remove('a');
      expect(index.size).to.equal(1);
      expect(index.search(indexed('John Kamau Mwangi'), 0.92)).to.deep.equal([]);
      expect(index.search(indexed('Peter Otieno'), 0.92).map((h) => h.id)).to.deep.equal(['b']);
      index.remove('missing');
      index.clear();
      expect(index.size).to.equal(0);
    });
  });
});
