import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { WorkspaceService, type WorkspaceHost } from '../../../plugins/workspace/service.js';
import { workspaceTools } from '../../../plugins/workspace/tools.js';
import { completion, FakeGateway } from '../../fakes/openai-gateway.js';
import type { RecordedRequest } from '../../../app/testing/http-fake.js';
import workspacePlugin from '../../../plugins/workspace/index.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';
import { sandboxWorks, startWorkspaceApp, texts, USER, workspaceDir } from './helpers.js';

const call = (id: string, name: string, args: Record<string, unknown>) => ({ id, name, arguments: JSON.stringify(args) });

/** The tool results the bot sent back to the model in a request. */
function toolResults(req: RecordedRequest): string[] {
  return (req.json.messages as Array<{ role: string; content: string }>).filter((m) => m.role === 'tool').map((m) => m.content);
}

describe('workspace with the model', function () {
  this.timeout(30_000);
  let gw: FakeGateway;
  let t: TestBot;

  beforeEach(async () => {
    gw = await FakeGateway.start('gw');
    t = await startWorkspaceApp({ env: { BASE_URL: gw.url, PUBLIC_BASE_URL: 'https://bot.example.org' } });
  });
  afterEach(async () => {
    await t.stop();
    await gw.close();
  });

  it('lets the model write and run a script and publish a page, refusing hostile file names', async () => {
    await t.transport.push({ text: '/ws', senderId: USER });
    gw.next(
      { status: 200, json: completion(null, { toolCalls: [call('c1', 'workspace_write_file', { path: 'primes.py', content: 'print([p for p in range(2, 30) if all(p % d for d in range(2, p))])' })] }) },
      { status: 200, json: completion(null, { toolCalls: [call('c2', 'workspace_run_python', { path: 'primes.py' })] }) },
      {
        status: 200,
        json: completion(null, {
          toolCalls: [
            call('c3', 'workspace_write_file', { path: '../../session_auth/creds.json', content: 'x' }),
            call('c4', 'workspace_write_file', { path: 'a\u0000b.py', content: 'x' }),
            call('c5', 'workspace_read_file', { path: '/etc/passwd' }),
            call('c6', 'workspace_write_file', { path: 'huge.txt', content: 'z'.repeat(1100 * 1024) }),
          ],
        }),
      },
      { status: 200, json: completion(null, { toolCalls: [call('c7', 'workspace_write_file', { path: 'index.html', content: '<h1>Primes</h1>' }), call('c8', 'workspace_publish_site', { username: 'primes' })] }) },
      { status: 200, json: completion('Done: the script printed the primes and your page is online.') },
    );
    const replies = texts(await t.transport.push({ text: 'write a primes script, run it and publish a page', senderId: USER }));
    expect(replies).to.deep.equal(['Done: the script printed the primes and your page is online.']);

    const requests = gw.chats();
    const first = requests[0].json;
    expect(first.tools.map((x: { function: { name: string } }) => x.function.name)).to.include.members(['workspace_write_file', 'workspace_run_python', 'workspace_publish_site']);
    expect(first.messages[0].content).to.include('coding workspace open');
    expect(toolResults(requests[1])[0]).to.match(/Wrote primes\.py/);
    if (sandboxWorks(t)) expect(toolResults(requests[2])[1]).to.include('[2, 3, 5, 7, 11, 13, 17, 19, 23, 29]');
    else expect(toolResults(requests[2])[1]).to.match(/sandbox/);
    const refusals = toolResults(requests[3]).slice(2);
    expect(refusals[0]).to.match(/Refused: .*"\.\."/);
    expect(refusals[1]).to.match(/Refused: .*control characters/);
    expect(refusals[2]).to.match(/Refused: absolute paths/);
    expect(refusals[3]).to.match(/Refused: .*over the limit of 1.0 MB per file/);
    expect(toolResults(requests[4]).slice(-1)[0]).to.equal('Published: https://bot.example.org/primes/');
    expect(await readFile(path.join(await workspaceDir(t), 'index.html'), 'utf8')).to.equal('<h1>Primes</h1>');
  });

  it('leaves other commands to their plugins and stops claiming messages after /ws exit', async () => {
    await t.transport.push({ text: '/ws', senderId: USER });
    expect(texts(await t.transport.push({ text: '.nothing', senderId: USER }))[0]).to.match(/Unknown command/);
    expect(texts(await t.transport.push({ text: '/ws exit', senderId: USER }))[0]).to.match(/Left the workspace/);
    await t.transport.push({ text: 'hello there', senderId: USER });
    const last = gw.chats().slice(-1)[0].json;
    expect((last.tools ?? []).map((x: { function: { name: string } }) => x.function.name)).not.to.include('workspace_write_file');
    expect(last.messages[0].content).not.to.include('coding workspace open');
  });

  it("is only open for its owner in that chat: others' messages are plain chat, tools refuse other callers", async () => {
    await t.transport.push({ text: '/ws', senderId: USER });
    await t.transport.push({ text: 'hi', senderId: '62844445555@s.whatsapp.net' });
    expect(gw.chats().slice(-1)[0].json.messages[0].content).not.to.include('coding workspace open');
    const service = new WorkspaceService(t.app.bot.host('workspace') as unknown as WorkspaceHost);
    await service.start();
    const write = workspaceTools(service).find((x) => x.name === 'workspace_write_file')!;
    const stranger = { chatId: '62844445555@s.whatsapp.net', senderId: '62844445555@s.whatsapp.net', isOwner: false, ctx: undefined as never, options: undefined as never, cite: () => undefined };
    const refused = await Promise.resolve(write.run({ path: 'x.py', content: 'print(1)' }, stranger)).then(() => 'ran', (err: Error) => err.message);
    expect(refused).to.match(/not open in this chat/);
    // The owner's tools work only in the chat where the workspace is open.
    const elsewhere = await Promise.resolve(write.run({ path: 'x.py', content: 'print(1)' }, { ...stranger, senderId: USER, chatId: '1203630001@g.us' })).then(() => 'ran', (err: Error) => err.message);
    expect(elsewhere).to.match(/not open in this chat/);
  });

  it('asks before /ws reset and deletes the files only after confirmation', async () => {
    await t.transport.push({ text: '/ws', senderId: USER });
    gw.next(
      { status: 200, json: completion(null, { toolCalls: [call('c1', 'workspace_write_file', { path: 'keep.py', content: 'print(1)' })] }) },
      { status: 200, json: completion('written') },
    );
    await t.transport.push({ text: 'make keep.py', senderId: USER });
    expect(texts(await t.transport.push({ text: '/ws reset', senderId: USER }))[0]).to.match(/\/ws reset confirm/);
    expect(texts(await t.transport.push({ text: '/ws files', senderId: USER }))[0]).to.include('keep.py');
    expect(texts(await t.transport.push({ text: '/ws reset confirm', senderId: USER }))[0]).to.match(/deleted/);
    expect(texts(await t.transport.push({ text: '/ws files', senderId: USER }))[0]).to.equal('No files yet.');
  });

  it('a tool reads the typed options with their defaults when config.json has no workspace section', async () => {
    await t.stop();
    t = await startTestBot(workspacePlugin, { env: { BASE_URL: gw.url }, enableGiven: false });
    expect(JSON.parse(await readFile(path.join(t.dir, 'config.json'), 'utf8')).plugins).to.not.have.property('workspace');
    await t.transport.push({ text: '/ws', senderId: USER });
    gw.next(
      { status: 200, json: completion(null, { toolCalls: [call('c1', 'workspace_write_file', { path: 'a.py', content: 'print(1)' })] }) },
      { status: 200, json: completion(null, { toolCalls: [call('c2', 'workspace_list_files', {})] }) },
      { status: 200, json: completion('listed') },
    );
    expect(texts(await t.transport.push({ text: 'list my files', senderId: USER }))).to.deep.equal(['listed']);
    // quotaMb's default (20) reached the tool through call.options.
    expect(toolResults(gw.chats()[2]).slice(-1)[0]).to.match(/^a\.py \(.*\)\nTotal .* of 20 MB\.$/);
  });
});

