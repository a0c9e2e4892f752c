import { expect } from 'chai';
import pingPlugin from '../../../plugins/ping/index.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';

/** The start log's line about the egress guard's test switch, if any. */
const switchLine = (t: TestBot) => t.logs().find((l) => /ALLOW_PRIVATE_HOSTS is on: links and downloads may reach local and private addresses/.test(String(l.msg)));

describe('EGRESS_ALLOW_PRIVATE_HOSTS, the egress guard\'s tests-only switch', function () {
  this.timeout(20_000);
  let t: TestBot | undefined;
  afterEach(async () => {
    await t?.stop();
    t = undefined;
  });

  it('is off by default: the settings say so and the start log says nothing about it', async () => {
    t = await startTestBot(pingPlugin);
    expect(t.app.settings.egressAllowPrivateHosts).to.equal(false);
    expect(switchLine(t)).to.equal(undefined);
  });

  it('on, the start log warns with its name, as a warning', async () => {
    t = await startTestBot(pingPlugin, { env: { EGRESS_ALLOW_PRIVATE_HOSTS: 'true' } });
    expect(t.app.settings.egressAllowPrivateHosts).to.equal(true);
    expect(switchLine(t)?.level).to.equal(40);
    expect(String(switchLine(t)?.msg)).to.match(/^ {2}EGRESS_ALLOW_PRIVATE_HOSTS is on: .*Meant for tests only/);
  });

  it('MP3_ALLOW_PRIVATE_HOSTS, its older name, still turns it on, and the warning names the variable that is set', async () => {
    t = await startTestBot(pingPlugin, { env: { MP3_ALLOW_PRIVATE_HOSTS: 'yes' } });
    expect(t.app.settings.egressAllowPrivateHosts).to.equal(true);
    expect(String(switchLine(t)?.msg)).to.match(/^ {2}MP3_ALLOW_PRIVATE_HOSTS is on/);
  });

  it('a value that is not a yes leaves it off', async () => {
    t = await startTestBot(pingPlugin, { env: { EGRESS_ALLOW_PRIVATE_HOSTS: 'false' } });
    expect(t.app.settings.egressAllowPrivateHosts).to.equal(false);
    expect(switchLine(t)).to.equal(undefined);
  });
});
