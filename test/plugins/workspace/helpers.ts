import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import workspacePlugin from '../../../plugins/workspace/index.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';
import type { RecordedRequest } from '../../../app/testing/http-fake.js';
import { completion } from '../../fakes/openai-gateway.js';
import { storedDocuments } from '../../helpers/disk-text.js';

export const USER = '62811112222@s.whatsapp.net';
export const USER_LID = '777666555444333@lid';

/**
 * Starts the app with only the workspace plugin, short limits for tests, and the given env/config. The wall-clock
 * limit is far past any ordinary run on a loaded machine (4 s was not: a busy CI box can take that long to start a
 * jailed python); the CPU limit, which a busy machine does not use up, is what stops an endless loop.
 */
export async function startWorkspaceApp(options: { env?: Record<string, string>; workspace?: Record<string, unknown>; config?: Record<string, unknown> } = {}): Promise<TestBot> {
  return startTestBot(workspacePlugin, {
    env: options.env,
    options: { timeLimitSeconds: 30, cpuSeconds: 4, maxOutputBytes: 4096, quotaMb: 2, ...(options.workspace ?? {}) },
    config: options.config,
  });
}

/**
 * A compliant model for the fake gateway: "send <path>" makes it call workspace_send_file (when offered); after the
 * tool it repeats the tool's answer; otherwise it says whether workspace tools were offered.
 */
export function sendFileModel(req: RecordedRequest) {
  const messages = req.json.messages as Array<{ role: string; content: string | null }>;
  const tool = messages.at(-1)?.role === 'tool' ? messages.at(-1) : undefined;
  if (tool) return { status: 200, json: completion(`tool: ${tool.content}`) };
  const offered = ((req.json.tools ?? []) as Array<{ function: { name: string } }>).some((t) => t.function.name === 'workspace_send_file');
  const asked = /send (\S+)/.exec(String(messages.at(-1)?.content ?? ''));
  if (asked && offered) return { status: 200, json: completion(null, { toolCalls: [{ id: 's1', name: 'workspace_send_file', arguments: JSON.stringify({ path: asked[1] }) }] }) };
  return { status: 200, json: completion(offered ? 'ok' : 'no workspace tools') };
}

/** The text of the bot's replies among `actions`. */
export function texts(actions: Array<{ type: string }>): string[] {
  return actions.filter((a) => a.type === 'text').map((a) => (a as unknown as { text: string }).text);
}

/** The files folder of the (only or given owner's) workspace of a test app. */
export async function workspaceDir(t: TestBot, owner = USER): Promise<string> {
  // The workspaces' index lives in the store database.
  for (const meta of Object.values(storedDocuments(path.join(t.dir, 'data'), 'workspace', 'index')) as Array<{ id: string; owner: string; ids: string[] }>) {
    if (meta.owner === owner || meta.ids.includes(owner)) return path.join(t.dir, 'data', 'workspaces', 'files', meta.id);
  }
  throw new Error(`no workspace of ${owner}`);
}

/** Writes a file into a workspace as if the user had made it. */
export async function putFile(dir: string, name: string, content: string): Promise<void> {
  await mkdir(path.dirname(path.join(dir, name)), { recursive: true });
  await writeFile(path.join(dir, name), content);
}

/** True when bubblewrap works on this machine (else the suites assert the refusal path). */
export function sandboxWorks(t: TestBot): boolean {
  return t.app.capabilities.has('sandbox');
}
