import { expect } from 'chai';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { FakeGateway } from '../../fakes/openai-gateway.js';
import { runConsoleChat as runChat, startConsoleChat, type ConsoleChat } from '../../helpers/console-chat.js';
import { shippedExample, tempDir, writeConfig } from '../../helpers/checkout.js';
import { storedDocuments } from '../../helpers/disk-text.js';

const OPERATOR = '10000000001';
const STRANGER = '62811111111';
const MEMBER = '62822222222';
const BOT = '10000000000';

type Message = { role: string; content: unknown };
const messagesOf = (req: { json?: any }) => (req.json?.messages ?? []) as Message[];
const systemOf = (req: { json?: any }) => String(messagesOf(req).find((m) => m.role === 'system')?.content ?? '');
const userTexts = (gw: FakeGateway) => gw.chats().map((req) => String([...messagesOf(req)].reverse().find((m) => m.role === 'user')?.content ?? ''));

/** config.json as shipped (pairing, groups an owner opens), on a free port. */
async function writeShipped(dir: string, overrides: Record<string, unknown> = {}): Promise<void> {
  await writeFile(path.join(dir, 'config.json'), JSON.stringify({ ...(await shippedExample()), port: 0, ...overrides }, null, 2));
}

describe('who is answered, and as whom (console)', function () {
  this.timeout(30_000);
  let gw: FakeGateway;
  let env: Record<string, string>;
  beforeEach(async () => {
    gw = await FakeGateway.start('model');
    env = { API_KEY: 'k-access-test', BASE_URL: gw.url, MODEL: 'm' };
  });
  afterEach(() => gw.close());

  /** A console chat (in this process) with config.json as shipped, ready; its input closed and its end awaited after `run`. */
  async function withShippedChat(run: (chat: ConsoleChat, dir: string) => Promise<void>): Promise<void> {
    const dir = await tempDir();
    await writeShipped(dir);
    const chat = startConsoleChat({ cwd: dir, env });
    try {
      await chat.waitForLog(/console chat ready/, 30_000);
      await run(chat, dir);
    } finally {
      await chat.endInput();
    }
  }

  it('ships pairing and owner-opened groups in config.example.json', async () => {
    const example = await shippedExample();
    expect(example.access.mode).to.equal('pairing');
    expect(example.groups.policy).to.equal('allowlist');
    expect(example.takeover.minutes).to.equal(30);
  });

  it("holds a stranger's messages (nothing reaches the model), gives one code, tells the owner; .approve answers the first three", () =>
    withShippedChat(async (chat, dir) => {
      chat.send(`:as ${STRANGER}`);
      for (const text of ['first question', 'second question', 'third question', 'fourth question']) chat.send(text);
      const answer = await chat.waitForLine(/^bot> .*pairing code is/, { timeoutMs: 30_000 });
      const code = /pairing code is ([A-Z0-9]{6,8})\b/.exec(answer)![1];
      const notice = await chat.waitForLine(new RegExp(`^bot \\[to ${OPERATOR}@s\\.whatsapp\\.net\\] Pairing request: .*\\+${STRANGER}.*Code: ${code}`));
      expect(notice).to.include(code);
      // The stranger tries to approve themselves: held like any message (never reaches a command); a wrong code is
      // refused in words.
      chat.send(`.approve ${code}`);
      chat.send(`:as ${OPERATOR}`);
      chat.send('.approve ZZZZ2222');
      await chat.waitForLine(/^bot> No pairing request has the code ZZZZ2222/);
      expect(gw.chats(), 'nothing reached the model before approval').to.have.length(0);
      expect(chat.lines().filter((l) => /pairing code is/.test(l)), 'the code is given once').to.have.length(1);

      chat.send(`.approve ${code.toLowerCase()}`);
      await chat.waitForLine(/^bot> Approved: .*\(\+62811111111\) can talk to me now\. I am answering the 3 messages/);
      await chat.waitForLine(new RegExp(`^bot \\[to ${STRANGER}@s\\.whatsapp\\.net\\] model: third question`));
      expect(userTexts(gw)).to.deep.equal(['first question', 'second question', 'third question']);
      // Used up: the same code again is refused.
      chat.send(`.approve ${code}`);
      await chat.waitForLine(new RegExp(`^bot> No pairing request has the code ${code}`));
      // Let in for good (persisted), and answered straight away from now on.
      chat.send(`:as ${STRANGER}`);
      chat.send('now I am in');
      await chat.waitForLine(/^bot> model: now I am in$/);
      expect(await chat.endInput()).to.equal(0);
      const state = storedDocuments(path.join(dir, 'data'), 'core', 'access')[''] as any;
      expect(state.approved.map((a: { id: string }) => a.id)).to.deep.equal([STRANGER]);
      expect(state.pending).to.deep.equal([]);
    }));

  it('.deny drops what was held and the stranger gets no new code at once', () =>
    withShippedChat(async (chat) => {
      chat.send(`:as ${STRANGER}`);
      chat.send('let me in');
      const code = /pairing code is ([A-Z0-9]+)/.exec(await chat.waitForLine(/pairing code is/))![1];
      chat.send(`:as ${OPERATOR}`);
      chat.send(`.deny ${code}`);
      await chat.waitForLine(/^bot> Denied: \(\+62811111111\)/);
      chat.send(`:as ${STRANGER}`);
      chat.send('again please');
      chat.send(`:as ${OPERATOR}`);
      chat.send('.ping');
      await chat.waitForLine(/^bot> pong/);
      expect(chat.lines().filter((l) => /pairing code is/.test(l))).to.have.length(1);
      expect(gw.chats()).to.have.length(0);
    }));

  it('without the keys in config.json an existing install answers everyone and every group as before', async () => {
    const dir = await tempDir();
    const example = await shippedExample();
    delete example.access;
    delete example.groups;
    await writeFile(path.join(dir, 'config.json'), JSON.stringify({ ...example, port: 0 }));
    const run = await runChat([`:as ${STRANGER}`, 'hello', ':group team', `@${BOT} hi group`].join('\n') + '\n', { cwd: dir, env });
    expect(run.lines).to.deep.equal(['bot> model: hello', `bot> model: user ${STRANGER}: hi group`]);
  });

  it('starts with a warning when nobody can approve a pairing code', async () => {
    const dir = await tempDir();
    await writeShipped(dir);
    const run = await runChat('', { cwd: dir, env });
    expect(run.stderr).to.match(/NOBODY CAN APPROVE a pairing code/);
    const owned = await tempDir();
    await writeShipped(owned, { owners: ['62899999999'] });
    expect((await runChat('', { cwd: owned, env })).stderr).not.to.match(/NOBODY CAN APPROVE/);
  });

  it('a group is closed until an owner opens it with a mention; a member gets no answer there; mention, always and off do what they say', async () => {
    const dir = await tempDir();
    await writeShipped(dir);
    const script = [
      ':group team',
      `@${BOT} anyone home?`,
      `:as ${MEMBER}`,
      `@${BOT} hello bot`,
      '.activation always',
      `@${BOT} .activation always`,
      '.activation',
      'still closed?',
      `:as ${OPERATOR}`,
      '.activation mention',
      `@${BOT} .activation mention`,
      `:as ${MEMBER}`,
      'not for the bot',
      `@${BOT} mentioned now`,
      `:as ${OPERATOR}`,
      '.activation always',
      `:as ${MEMBER}`,
      'no mention needed',
      `:as ${OPERATOR}`,
      '.activation off',
      `:as ${MEMBER}`,
      `@${BOT} are you off?`,
      '.activation',
      `:as ${OPERATOR}`,
      `@${BOT} .activation`,
    ].join('\n');
    const run = await runChat(script + '\n', { cwd: dir, env });
    // Closed, the group hears nothing from the bot but an owner's command that mentions it.
    expect(run.lines).to.deep.equal([
      'bot> Done: I answer here when someone mentions me or replies to me.',
      'bot> model: user 62822222222: mentioned now',
      'bot> Done: I read every message here and answer when I have something to say.',
      'bot> model: user 62822222222: no mention needed',
      'bot> Done: I stay quiet here (I still keep the conversation as context).',
      'bot> Activation here: off: I stay quiet here (I still keep the conversation as context). Owners change it with .activation mention|always|off.',
    ]);
    expect(userTexts(gw).map((t) => t.replace(/^.*?: /, ''))).to.deep.equal(['mentioned now', 'no mention needed']);
    const state = storedDocuments(path.join(dir, 'data'), 'core', 'access')[''] as any;
    expect(state.groups['team@g.us'].mode).to.equal('off');
  });

  it("a persona goes into its own chat's system prompt only, is shown, limited, removed, and refused to group members", async () => {
    const dir = await tempDir();
    await writeConfig(dir);
    const script = [
      '.persona Always answer like a pirate.',
      'hello from the owner',
      `:as ${MEMBER}`,
      'hello from someone else',
      ':group team',
      `@${BOT} .persona Speak French.`,
      `:as ${OPERATOR}`,
      ':dm',
      '.persona',
      `.persona ${'x'.repeat(2001)}`,
      '.persona off',
      'hello again',
    ].join('\n');
    const run = await runChat(script + '\n', { cwd: dir, env });
    expect(run.lines[0]).to.match(/^bot> Done: in this chat I follow these instructions/);
    expect(run.lines).to.include("bot> Sorry, only the owners of this bot can set a group's persona (.persona).");
    expect(run.lines).to.include('bot> This chat\'s persona:');
    expect(run.lines).to.include('  Always answer like a pirate.');
    expect(run.lines.some((l) => l.startsWith('bot> That persona is too long (2001 characters; the limit is 2000)'))).to.equal(true);
    expect(run.lines).to.include('bot> Done: this chat has no persona any more.');
    const requests = gw.chats();
    expect(requests).to.have.length(3);
    expect(systemOf(requests[0])).to.include('Always answer like a pirate.');
    expect(systemOf(requests[1]), "another chat's prompt").not.to.include('pirate');
    expect(systemOf(requests[2]), 'after .persona off').not.to.include('pirate');
  });

  it('the owner writing from the phone pauses that chat only (no model call), is history afterwards, and .bot on hands it back', async () => {
    const dir = await tempDir();
    await writeConfig(dir);
    const script = [
      `:as ${MEMBER}`,
      'hello bot',
      ':fromme I will answer this one myself',
      'are you there?',
      `:as ${STRANGER}`,
      'another chat',
      `:as ${MEMBER}`,
      ':fromme .bot on',
      'back again?',
      `.bot off`,
    ].join('\n');
    const run = await runChat(script + '\n', { cwd: dir, env });
    expect(run.lines).to.deep.equal(['bot> model: hello bot', 'bot> model: another chat', 'bot> model: back again?', 'bot> Sorry, only the owners of this bot can pause me in a chat (.bot).']);
    expect(userTexts(gw)).to.deep.equal(['hello bot', 'another chat', 'back again?']);
    const last = messagesOf(gw.chats()[2]).map((m) => `${m.role}: ${String(m.content)}`);
    expect(last).to.include('assistant: I will answer this one myself');
    expect(last).to.include('user: are you there?');
  });

  it('an owner pauses a chat with .bot off until .bot on; a paused chat costs no model call', async () => {
    const dir = await tempDir();
    await writeConfig(dir);
    const script = ['.bot off', 'ignored while paused', '.bot', '.bot on', 'answered again'].join('\n');
    const run = await runChat(script + '\n', { cwd: dir, env });
    expect(run.lines).to.deep.equal([
      'bot> Paused: I stay quiet in this chat until an owner sends .bot on (other chats are not affected).',
      'bot> I am paused in this chat. Owners: .bot on / .bot off.',
      'bot> I am back: I answer in this chat again.',
      'bot> model: answered again',
    ]);
    expect(userTexts(gw)).to.deep.equal(['answered again']);
  });
});
