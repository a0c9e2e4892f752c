import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { defineTool, Type, type MessageContext, type RespondOptions, type Static, type Tool, type ToolCall } from '../../core/index.js';
import { displayName } from './file-names.js';
import { kb } from './files.js';
import type { workspaceOptions } from './options.js';
import type { WorkspaceService } from './service.js';
import type { WorkspaceMeta } from './store.js';

type Options = Static<typeof workspaceOptions>;

/**
 * Every workspace tool reads or changes the owner's own files (reading too: what it reads can be posted in the chat),
 * so the core offers none of the tools that bring in outside text or act on chats in the same turn.
 */
const OWN_FILES = { outsideText: false, acts: 'ownFiles' } as const;

/**
 * The tools the main model gets while a user's workspace is open. Every call finds the workspace from the chat and
 * sender the core binds into the call (never from the model's arguments) and works only while that workspace is
 * open in that chat.
 *
 * @example ctx.ai.respond(ctx, { system: workspacePrompt(...), extraTools: workspaceTools(service) });
 */
export function workspaceTools(service: WorkspaceService): Tool<any>[] {
  const bound = (call: Pick<ToolCall, 'senderId' | 'senderAltId' | 'chatId'>): WorkspaceMeta => {
    const meta = service.openWorkspace(call.senderId, call.senderAltId, call.chatId);
    if (!meta) throw new Error('the workspace is not open in this chat (the user can open it with /ws)');
    return meta;
  };
  const pathParam = (description = 'file name inside the workspace, e.g. main.py or site/style.css (no leading /, no ..)') => Type.String({ description });
  return [
    defineTool({
      name: 'workspace_list_files',
      progress: 'looking at your files…',
      effects: OWN_FILES,
      description: "List the files in the user's workspace with their sizes.",
      parameters: Type.Object({}),
      run: async (_args, call) => {
        const meta = bound(call);
        return service.fileOp(meta, async (files) => {
          const list = await files.list();
          const usage = await files.usage();
          if (!list.length) return 'The workspace is empty.';
          return `${list.map((f) => `${displayName(f.name)} (${kb(f.size)})`).join('\n')}\nTotal ${kb(usage.bytes)} of ${service.options().quotaMb} MB.`;
        });
      },
    }),
    defineTool({
      name: 'workspace_read_file',
      progress: 'reading your file…',
      effects: OWN_FILES,
      description: "Read a text file from the user's workspace.",
      parameters: Type.Object({ path: pathParam() }),
      run: async (args, call) => {
        const meta = bound(call);
        return service.fileOp(meta, async (files) => {
          const read = await files.read(args.path, 7000);
          return read.truncated ? `${read.text}\n[only the first 7000 bytes of ${read.size} are shown]` : read.text;
        });
      },
    }),
    defineTool({
      name: 'workspace_send_file',
      progress: 'sending your file…',
      // It reads the owner's file and posts it back into the chat where the owner opened the workspace, like
      // workspace_read_file's answer: `ownFiles`, so no tool bringing in outside text shares its turn.
      effects: { ...OWN_FILES, kind: 'sendFile' },
      description: "Send a file from the user's workspace to this chat as a document (the user receives the file itself, e.g. a result.csv or a chart.png the code made).",
      parameters: Type.Object({ path: pathParam(), caption: Type.Optional(Type.String({ description: 'a short caption, optional' })) }),
      run: async (args, call) => {
        const meta = bound(call);
        const folder = await mkdtemp(path.join(tmpdir(), 'ws-send-'));
        try {
          return await service.fileOp(meta, async (files) => {
            // The copy keeps the extension (a safe one only), from which the transport names the file's type.
            const ext = path.extname(args.path).toLowerCase();
            const copy = path.join(folder, `file${/^\.[a-z0-9]{1,8}$/.test(ext) ? ext : ''}`);
            const sent = await files.copyOut(args.path, service.options().maxSendMb * 1024 * 1024, copy);
            const caption = args.caption?.trim().slice(0, 1000);
            await call.ctx.sendMedia({ kind: 'document', path: copy, fileName: path.posix.basename(sent.name), ...(caption ? { caption } : {}) });
            return `Sent ${displayName(sent.name)} (${kb(sent.size)}) to the chat as a document. Do not repeat its content; say in a few words that it is sent.`;
          });
        } finally {
          await rm(folder, { recursive: true, force: true });
        }
      },
    }),
    defineTool({
      name: 'workspace_write_file',
      progress: 'writing your file…',
      effects: OWN_FILES,
      description: "Create or overwrite a file in the user's workspace with the complete new content (python scripts, index.html, css, js, data).",
      parameters: Type.Object({ path: pathParam(), content: Type.String({ description: 'the whole file content' }) }),
      run: async (args, call) => {
        const meta = bound(call);
        return service.fileOp(meta, async (files) => {
          const written = await files.write(args.path, args.content);
          return `Wrote ${written.name} (${kb(written.size)}).`;
        });
      },
    }),
    defineTool({
      name: 'workspace_delete_file',
      progress: 'deleting your file…',
      effects: { ...OWN_FILES, kind: 'deleteFiles' },
      description: "Delete a file (or a folder with its contents) from the user's workspace.",
      parameters: Type.Object({ path: pathParam() }),
      run: async (args, call) => {
        const meta = bound(call);
        return service.fileOp(meta, async (files) => {
          await files.remove(args.path);
          return `Deleted ${args.path}.`;
        });
      },
    }),
    defineTool({
      name: 'workspace_run_python',
      progress: 'running your script…',
      effects: OWN_FILES,
      description: 'Run a python script of the workspace in the sandbox (python 3 standard library only, no network, time and memory limits) and get its output.',
      parameters: Type.Object({ path: pathParam('the .py file to run, e.g. main.py') }),
      run: async (args, call) => service.run(bound(call), args.path),
    }),
    defineTool({
      name: 'workspace_publish_site',
      progress: 'publishing your site…',
      effects: { ...OWN_FILES, kind: 'publish' },
      description: "Publish the workspace's index.html (and its css/js/images) as the user's website and get its address. Pass username only when the user chose one.",
      parameters: Type.Object({ username: Type.Optional(Type.String({ description: 'site name the user chose: 3-30 lowercase letters, digits, dashes' })) }),
      run: async (args, call) => service.publish(bound(call), args.username || undefined),
    }),
  ];
}

/**
 * The tools as one turn offers them (`extraTools` of `ctx.ai.respond`): each call sees this plugin's context, as the
 * tools a plugin offers in `setup` do.
 */
export function asTurnTools(tools: Tool<any>[], ctx: MessageContext<Options>): NonNullable<RespondOptions['extraTools']> {
  return tools.map((tool) => ({ ...tool, run: (args, call) => tool.run(args, { ...call, ctx }) }));
}

/** The extra system prompt while a workspace is open. */
export function workspacePrompt(service: WorkspaceService, meta: WorkspaceMeta): string {
  const o = service.options();
  const runtime = service.runtime();
  const site = service.siteAddress(meta);
  return [
    "The user has their coding workspace open. Use the workspace_* tools to list, read, write and delete the user's files and to run python scripts; do the work instead of only describing it.",
    runtime.ok
      ? `Scripts run in a sandbox: python 3 standard library only, no network, no access outside the workspace folder, at most ${o.timeLimitSeconds} s and ${o.memoryMb} MB per run, output cut at ${kb(o.maxOutputBytes)}.`
      : `Running code is not possible right now: ${runtime.reason} Say so if the user asks to run something.`,
    `File names: letters, digits, _, - and ., with / for folders. Up to ${o.maxFileKb} KB per file and ${o.quotaMb} MB in all. Always write whole files.`,
    site
      ? `A website is index.html plus its assets in the workspace; it is served at ${site}.`
      : meta.username
        ? 'Site hosting is off on this bot (no PUBLIC_BASE_URL): websites can be written but not published.'
        : 'A website is index.html plus its assets in the workspace; to publish it the user needs a site name (/ws name <username>, or pass it to workspace_publish_site).',
    'Keep replies short: say what you changed and show run output briefly. The user leaves the workspace with /ws exit.',
  ].join('\n');
}
