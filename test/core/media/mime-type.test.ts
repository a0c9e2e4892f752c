import { expect } from 'chai';
import { mimeFor } from '../../../core/services/media/mime-type.js';

describe('mimeFor: the type a sent file gets on WhatsApp (by its name)', () => {
  it('names common documents by mime-db, so the phone opens them in the right app', () => {
    expect(mimeFor('/tmp/ws-send-x/file.csv')).to.equal('text/csv');
    expect(mimeFor('report.XLSX')).to.equal('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
    expect(mimeFor('data.json')).to.equal('application/json');
  });

  it("keeps WhatsApp's own types (a voice note's codec) and falls back to the caller's kind when the name says nothing", () => {
    expect(mimeFor('note.ogg')).to.equal('audio/ogg; codecs=opus');
    expect(mimeFor('track.bin', 'audio/mpeg')).to.equal('audio/mpeg');
    expect(mimeFor('script.py')).to.equal('application/octet-stream');
    expect(mimeFor('no-extension', 'video/mp4')).to.equal('video/mp4');
  });
});
