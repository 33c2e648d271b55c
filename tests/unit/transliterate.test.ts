import { expect } from 'chai';
import { compareNames, partialMatch } from '../../domain/compliance/name-index';
import { normaliseName } from '../../domain/compliance/normalise';
import { foldName, romanisationKey } from '../../domain/compliance/transliterate';

const fold = (raw: string) => foldName(normaliseName(raw)!.value)!;

describe('unit: names folded to Latin', () => {
  describe('when a name is written in Cyrillic, Arabic or Chinese', () => {
    it('then Cyrillic is transliterated, keeping й and ё apart from и and е', () => {
      expect(fold('Виктор Петрович Иванов').plain).to.equal('viktor petrovich ivanov');
      expect(fold('Евгений Пригожин').plain).to.equal(fold('Yevgeniy Prigozhin').plain);
      expect(fold('Пётр Фёдоров').plain).to.equal(fold('Pyotr Fyodorov').plain);
    });

    it('then Chinese is read as pinyin, surname apart from the given name, compound surnames together', () => {
      expect(fold('习近平').plain).to.equal('xi jinping');
      expect(fold('欧阳修').plain).to.equal(fold('Ouyang Xiu').plain);
      expect(fold('习近平').key).to.equal(fold('Jinping Xi').key);
    });

    it('then Arabic is compared by its consonant skeleton, without the article, the particles or the vowels', () => {
      const arabic = fold('محمد بن سلمان');
      expect(arabic.abjad).to.equal(true);
      expect(arabic.skeleton).to.equal(fold('Mohammed bin Salman').skeleton);
      expect(fold('بشار الأسد').skeleton).to.equal(fold('Bashar al-Assad').skeleton);
      expect(fold('عبد الرحمن').skeleton).to.equal(fold('Abdulrahman').skeleton);
      expect(fold('عمر سليمان').plain).to.contain('mr'); // "mr" here is عمر, not an honorific
    });

    it('then Latin spellings of the same Russian sounds meet', () => {
      expect(romanisationKey('yevgeniy')).to.equal(romanisationKey('evgeny'));
      expect(romanisationKey('alexei')).to.equal(romanisationKey('aleksey'));
      expect(romanisationKey('yuryevich')).to.equal(romanisationKey('yurievich'));
    });
  });

  describe('when two names are compared', () => {
    it('then a name in another script scores like its Latin spelling', () => {
      expect(compareNames(fold('Виктор Петрович Иванов'), fold('Viktor Petrovich Ivanov')).score).to.be.at.least(0.92);
      expect(compareNames(fold('قاسم سليماني'), fold('Qasem Soleimani')).score).to.be.at.least(0.92);
      expect(compareNames(fold('赵国强'), fold('Zhao Guoqiang')).score).to.equal(1);
    });

    it('then names sharing only a long given name fall well below the threshold', () => {
      expect(compareNames(fold('Ma Guiying'), fold('Wang Guiying')).score).to.be.below(0.9);
    });

    it('then a surname that differs only a little is a weak pair: reviewed, not blocked', () => {
      const { score, weakest } = compareNames(fold('Zhang Guohua'), fold('Zheng Guohua'));
      expect(score).to.be.above(0.92);
      expect(weakest).to.be.below(0.88);
    });

    it('then a listed name the screened one leaves out is a dropped name, but a merged one is not', () => {
      expect(compareNames(fold('John Mwangi'), fold('John Kamau Mwangi')).dropped).to.equal(true);
      expect(compareNames(fold('Abdulrahman Haddad'), fold('Abdel Rahman Haddad')).dropped).to.equal(false);
    });

    it('then initials and a dropped name are partial matches, and unrelated names are not', () => {
      expect(partialMatch(fold('J. K. Mwangi'), fold('John Kamau Mwangi'))).to.equal('initials');
      expect(partialMatch(fold('John Mwangi'), fold('John Kamau Mwangi'))).to.equal('dropped_name');
      expect(partialMatch(fold('J. Otieno'), fold('John Kamau Mwangi'))).to.equal(null);
      expect(partialMatch(fold('Mwangi'), fold('John Kamau Mwangi'))).to.equal(null);
    });
  });
});
