import { expect } from 'chai';
import accessPlugin from '../../../plugins/access/index.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';

const ANN = '6281300000041@s.whatsapp.net';
const CUT = /\n\n_\(My answer was cut here: it was longer than the ([\d,]+) characters an answer may have\.\)_$/;

/** A paragraph of numbered words, so what was kept can be checked word by word. */
const paragraph = (i: number) => Array.from({ length: 40 }, (_, j) => `p${i}w${j}`).join(' ');
const answerOf = (chars: number) => {
  const paragraphs: string[] = [];
  for (let i = 0; paragraphs.join('\n\n').length < chars; i++) paragraphs.push(paragraph(i));
  return paragraphs.join('\n\n');
};

/** ai.maxAnswerChars: a runaway answer is cut where a paragraph or word ends, and says so; never silently shortened. */
describe('the answer length cap (ai.maxAnswerChars)', function () {
  this.timeout(30_000);
  let t: TestBot | undefined;
  afterEach(async () => {
    await t?.stop();
    t = undefined;
  });

  it('an answer over the owner-set cap is cut at a paragraph, says so in its last line, and the history keeps what was sent', async () => {
    const long = answerOf(30_000);
    t = await startTestBot(accessPlugin, { model: () => long, config: { ai: { maxAnswerChars: 5000 } } });
    const sent = await t.send({ chatId: ANN, senderId: ANN, text: 'tell me everything' });
    const all = sent.join('\n\n');
    expect(all).to.match(CUT);
    expect(CUT.exec(all)![1]).to.equal('5,000');
    const kept = all.replace(CUT, '');
    expect(kept.length).to.be.at.most(5000).and.at.least(2500);
    expect(long.startsWith(kept), 'what is kept is the start of the answer, cut between words').to.equal(true);
    expect(long[kept.length]).to.match(/\s/);
    const history = await t.app.bot.histories.recent(ANN);
    expect(history.at(-1)!.text).to.equal(all);
  });

  it('by default an answer of up to 16,000 characters goes whole and a longer one is cut', async () => {
    let next = answerOf(15_000);
    t = await startTestBot(accessPlugin, { model: () => next });
    const whole = (await t.send({ chatId: ANN, senderId: ANN, text: 'one' })).join('\n\n');
    expect(whole).to.equal(next);
    next = answerOf(40_000);
    const cut = (await t.send({ chatId: ANN, senderId: ANN, text: 'two' })).join('\n\n');
    expect(cut).to.match(CUT);
    expect(CUT.exec(cut)![1]).to.equal('16,000');
    expect(cut.replace(CUT, '').length).to.be.at.most(16_000);
  });

  it('a cap outside 500–65536 is refused at start, in words', async () => {
    let err: unknown;
    await startTestBot(accessPlugin, { config: { ai: { maxAnswerChars: 100 } } }).then((bot) => bot.stop(), (e: unknown) => (err = e));
    expect(String(err)).to.match(/ai\.maxAnswerChars/);
  });
});
