import { expect } from 'chai';
import { BadFileName, checkFileName } from '../../../plugins/workspace/file-names.js';
import { checkUsername } from '../../../plugins/workspace/usernames.js';

describe('workspace file names', () => {
  it('accepts plain relative names and folders', () => {
    expect(checkFileName('main.py')).to.equal('main.py');
    expect(checkFileName(' site/css/style.css ')).to.equal('site/css/style.css');
    expect(checkFileName('data_2024-01.csv')).to.equal('data_2024-01.csv');
  });

  for (const [label, name] of [
    ['parent traversal', '../../x'],
    ['traversal in the middle', 'a/../../b.py'],
    ['absolute path', '/etc/passwd'],
    ['home path', '~/x.py'],
    ['NUL byte', 'main.py\u0000.txt'],
    ['newline', 'a\nb.py'],
    ['backslash', '..\\..\\x'],
    ['dotfile', '.env'],
    ['dot folder', '.git/config'],
    ['single dot', './main.py'],
    ['empty part', 'a//b.py'],
    ['trailing slash', 'dir/'],
    ['over-long name', 'a'.repeat(250)],
    ['over-long part', `${'b'.repeat(120)}.py`],
    ['deep nesting', Array(12).fill('d').join('/') + '/x.py'],
    ['shell characters', 'x;rm -rf.py'],
    ['empty', '   '],
  ] as const) {
    it(`refuses ${label}`, () => {
      expect(() => checkFileName(name)).to.throw(BadFileName);
    });
  }

  it('refuses what is not text', () => {
    expect(() => checkFileName(42)).to.throw(BadFileName, /text/);
  });
});

describe('site usernames', () => {
  it('accepts 3–30 lowercase letters, digits and dashes, lower-casing the input', () => {
    expect(checkUsername('alice')).to.deep.equal({ ok: true, name: 'alice' });
    expect(checkUsername('Bob-42')).to.deep.equal({ ok: true, name: 'bob-42' });
    expect(checkUsername('a'.repeat(30))).to.deep.equal({ ok: true, name: 'a'.repeat(30) });
  });

  it('refuses names that are too short or too long', () => {
    expect(checkUsername('ab')).to.include({ ok: false });
    expect(checkUsername('a'.repeat(31))).to.include({ ok: false });
  });

  it('refuses other characters and dash misuse', () => {
    for (const bad of ['al ice', 'alice!', '../x', 'ali_ce', 'ålice', '-alice', 'alice-', 'al--ice', 'a.b.c']) {
      expect(checkUsername(bad), bad).to.include({ ok: false });
    }
  });

  it('refuses reserved words', () => {
    for (const reserved of ['config', 'admin', 'api', 'static', 'workspace', 'Config', 'healthz', 'readyz', 'metrics']) {
      const verdict = checkUsername(reserved);
      expect(verdict.ok, reserved).to.equal(false);
      expect((verdict as { reason: string }).reason).to.match(/reserved/);
    }
  });
});
