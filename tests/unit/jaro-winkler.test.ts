import { expect } from 'chai';
import { commonPrefixLength, jaro, jaroWinkler, jaroWinklerUpperBound } from '../../domain/compliance/jaro-winkler';
import { prng } from '../support/random';

function randomWord(next: () => number, alphabet = 'abcdehikmnoprstuwy '): string {
  const length = 1 + Math.floor(next() * 14);
  let word = '';
  for (let i = 0; i < length; i++) word += alphabet[Math.floor(next() * alphabet.length)];
  return word;
}

function commonCharacters(a: string, b: string): number {
  const counts = new Map<string, number>();
  for (const ch of a) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let common = 0;
  for (const ch of b) {
    const left = counts.get(ch) ?? 0;
    if (left > 0) {
      common += 1;
      counts.set(ch, left - 1);
    }
  }
  return common;
}

describe('unit: Jaro-Winkler', () => {
  describe('when the textbook pairs are scored', () => {
    // Winkler (1990) and the usual references: jaro, then Jaro-Winkler.
    const cases: [string, string, number, number][] = [
      ['MARTHA', 'MARHTA', 0.9444, 0.9611],
      ['DWAYNE', 'DUANE', 0.8222, 0.84],
      ['DIXON', 'DICKSONX', 0.7667, 0.8133],
      ['JELLYFISH', 'SMELLYFISH', 0.8963, 0.8963],
    ];
    for (const [a, b, expectedJaro, expectedJw] of cases) {
      it(`then ${a} / ${b} scores ${expectedJaro} (Jaro) and ${expectedJw} (Jaro-Winkler)`, () => {
        expect(jaro(a, b)).to.be.closeTo(expectedJaro, 0.0001);
        expect(jaroWinkler(a, b)).to.be.closeTo(expectedJw, 0.0001);
      });
    }
  });

  describe('when the strings are degenerate', () => {
    it('then identical strings score 1, including two empty ones', () => {
      expect(jaroWinkler('john kamau', 'john kamau')).to.equal(1);
      expect(jaroWinkler('', '')).to.equal(1);
    });

    it('then an empty string against another, or no character in common, scores 0', () => {
      expect(jaroWinkler('', 'john')).to.equal(0);
      expect(jaroWinkler('john', '')).to.equal(0);
      expect(jaroWinkler('abc', 'xyz')).to.equal(0);
    });

    it('then characters outside the matching window do not count', () => {
      // window = floor(6 / 2) - 1 = 2: the "a" at 0 and the "a" at 5 are too far apart.
      expect(jaro('abcdef', 'fbcdea')).to.be.closeTo((4 / 6 + 4 / 6 + 1) / 3, 1e-9);
    });
  });

  describe('when the prefix bonus applies', () => {
    it('then the common prefix counts up to four characters', () => {
      expect(commonPrefixLength('johnathan', 'johnathon')).to.equal(4);
      expect(commonPrefixLength('jon', 'john')).to.equal(2);
      expect(commonPrefixLength('', 'john')).to.equal(0);
    });

    it('then no bonus is given at or below a Jaro score of 0.7', () => {
      const a = 'abcxyzqq';
      const b = 'abcmnopr';
      expect(jaro(a, b)).to.be.at.most(0.7);
      expect(jaroWinkler(a, b)).to.equal(jaro(a, b));
    });
  });

  describe('when names differ by one letter', () => {
    it('then "jon kamau mwangi" against "john kamau mwangi" scores above 0.92', () => {
      expect(jaroWinkler('jon kamau mwangi', 'john kamau mwangi')).to.be.greaterThan(0.98);
    });

    it('then an unrelated name scores well below 0.92', () => {
      expect(jaroWinkler('atieno grace odhiambo', 'john kamau mwangi')).to.be.lessThan(0.7);
    });
  });

  describe('when random pairs are scored', () => {
    const next = prng(42);
    const pairs = Array.from({ length: 2000 }, () => [randomWord(next), randomWord(next)] as const);

    it('then the score is symmetric and between 0 and 1', () => {
      for (const [a, b] of pairs) {
        const ab = jaroWinkler(a, b);
        expect(ab, `${a} / ${b}`).to.be.within(0, 1);
        expect(jaroWinkler(b, a), `${a} / ${b}`).to.be.closeTo(ab, 1e-12);
      }
    });

    it('then the upper bound from the characters in common is never below the score', () => {
      for (const [a, b] of pairs) {
        const bound = jaroWinklerUpperBound(a.length, b.length, commonCharacters(a, b));
        expect(bound + 1e-12, `${a} / ${b}`).to.be.at.least(jaroWinkler(a, b));
      }
    });
  });
});
