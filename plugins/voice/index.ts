import { readdir } from 'node:fs/promises';
import { definePlugin, defineTool, type KeyPool, type Plugin, type PluginHost, type PluginOffer, Type } from '../../core/index.js';
import { atFirstUse, ffmpegBinary } from '../../core/builtin.js';
import { ARCHIVE_FOLDER, VOICE_ARCHIVE } from './archive-note.js';
import { DEFAULT_SPEECH_MODEL, DEFAULT_SPEECH_VOICE, voiceOptionsSchema, type VoiceOptions } from './options.js';
import { AUDIO_BUDGET, SENT_VOICE_REPLIES, VOICE_CONTEXT, VOICE_MODE, VOICE_RECEIVED, VOICE_REPLY_CHOICES } from './stores.js';
import type { VoiceHandlers } from './runtime.js';

/** Test seams: a clock for key parking and cooldowns, the dice of auto reactions, and how the handlers load. */
export interface VoicePluginDeps {
  now?: () => number;
  random?: () => number;
  /** Loads the handlers' module (runtime.ts); default `import('./runtime.js')`. */
  load?: () => Promise<typeof import('./runtime.js')>;
}

/** The transcription model, unless AUDIO_MODEL names another. */
export const DEFAULT_AUDIO_MODEL = 'whisper-large-v3-turbo';

/**
 * Creates the voice plugin. The default export is `createVoicePlugin()`; tests pass a clock.
 *
 * @example
 * const voice = createVoicePlugin({ now: () => clock });
 * const bot = await startTestBot(voice, { audio: await FakeAudio.start(() => 'hello'), env: { AUDIO_API_KEYS: 'k1,k2' } });
 */
export function createVoicePlugin(deps: VoicePluginDeps = {}): Plugin {
  return definePlugin({
    name: 'voice',
    description: 'Hears voice notes: transcribes them, answers them like text, keeps a per-chat archive you can search',
    options: voiceOptionsSchema,
    // The plugin owns the `audio` capability: at start, whether audio keys are set; at run time, the key pool's state.
    provides: [
      {
        name: 'audio',
        detect: (host) => {
          const keys = host.settings.audio.keys.length;
          return keys ? { ok: true, detail: `${keys} audio key(s)` } : { ok: false, notConfigured: true, detail: 'AUDIO_API_KEYS is empty: voice transcription, audio archive and auto-reactions are off' };
        },
        missing: 'no audio key: voice notes cannot be heard',
        fix: 'add audio keys: AUDIO_API_KEYS in .env (npm run setup)',
      },
    ],
    settings: [
      { name: 'AUDIO_MODEL', description: `the audio provider's transcription model (default ${DEFAULT_AUDIO_MODEL})` },
      { name: 'AUDIO_SPEECH_MODEL', description: `text-to-speech model of the audio provider for voice replies (default ${DEFAULT_SPEECH_MODEL})` },
      { name: 'AUDIO_SPEECH_VOICE', description: `voice of that model (default ${DEFAULT_SPEECH_VOICE})` },
    ],
    // Kept by the core: backups, .mydata, deletes and chat moves follow from these.
    stores: [VOICE_ARCHIVE, AUDIO_BUDGET, VOICE_REPLY_CHOICES, SENT_VOICE_REPLIES, VOICE_RECEIVED, VOICE_MODE, VOICE_CONTEXT],
    setup: (host) => voiceSetup(host, deps),
  });
}

/** One running voice plugin: its stores and provider live in its handlers (runtime.ts), made at their first use. */
function voiceSetup(host: PluginHost<VoiceOptions>, deps: VoicePluginDeps): PluginOffer<VoiceOptions> {
  const settings = host.settings;
  // The core's one pool of the audio keys, shared with the provider chain's audio legs and the backup search.
  const pool: KeyPool = host.audioKeys;
  if (deps.now) pool.useClock(deps.now);
  pool.notices = host.notices;
  pool.noticeText = { exhausted: (detail) => `The bot cannot hear voice notes: ${detail}.`, recovered: 'An audio key works again: voice notes are heard again.' };
  const audioModel = host.setting('AUDIO_MODEL')?.trim() || DEFAULT_AUDIO_MODEL;
  host.capabilities.setLive('audio', () => pool.status(), () => pool.usableCount() > 0);
  const ffmpeg = () => (host.capabilities.has('ffmpeg') ? ffmpegBinary(settings).path : undefined);
  /** Why audio is unusable now (keys may be used up at run time), for the handlers' `missing` sentences. */
  const audioDetail = (): string => host.capabilities.status('audio').detail;

  // The handlers' modules (transcriber, archive, provider, ffmpeg…) load at the first message, command or tool call
  // that needs them: a start that sees no voice note never loads them. One load per running plugin; a failed one is
  // the handler's error (said in the reply and the log) and the next use tries again.
  let latest: Promise<VoiceHandlers> | undefined;
  const load = deps.load ?? (() => import('./runtime.js'));
  const handlers = atFirstUse(() => (latest = load().then((m) => m.voiceHandlers(host, { now: deps.now, random: deps.random, pool, audioModel, ffmpeg, audioDetail }))));

  // Chat folders in the archive's layout of earlier versions become search logs now, without holding up the start
  // (each chat also waits for its own conversion at its first use, so nothing reads a chat half converted). With no
  // archive yet there is nothing to convert, and nothing loads.
  void hasArchive(host)
    .then(async (has) => has && (await handlers()).convertAll())
    .catch((err: unknown) => host.log.error({ err }, 'voice archive: converting the old layout failed (each chat tries again at its first use)'));
  if (pool.size) host.log.info({ audioKeys: pool.size }, `voice: ${pool.size} audio key(s) in the rotation pool (model ${audioModel})`);
  // Not set up is not broken: the start report's one "off:" line says it (and npm run doctor how to turn it on).
  else host.log.debug('voice: no audio key (AUDIO_API_KEYS): the bot cannot hear voice notes; audio transcription, the audio archive and auto-reactions are off');
  host.log.info(`voice: ${voiceRepliesLine(pool.size, host.options().replies.enabled, Boolean(ffmpeg()))}`);

  const searchTool = defineTool({
    name: 'search_voice_notes',
    progress: 'searching the voice notes…',
    // Transcripts of what anyone in the chat said: outside text.
    effects: { outsideText: true, acts: 'nothing' },
    description:
      'Search the transcripts of the voice notes sent in this chat (only this chat), e.g. "what did she say about the invoice in last week\'s voice note". Returns the best matches with sender, time and transcript.',
    needs: ['audio'],
    parameters: Type.Object({
      query: Type.String({ description: 'words to look for in the transcripts' }),
      limit: Type.Integer({ minimum: 1, maximum: 10, default: 5, description: 'how many notes to return (default 5)' }),
    }),
    // The chat comes from the core's binding (call.chatId), never from the model's arguments.
    run: async (args, call) => (await handlers()).searchForModel(call.chatId, args.query, args.limit),
  });

  return {
    observers: [{ needs: ['audio'], missing: 'voice notes are not transcribed or archived, and no auto-reactions', run: async (ctx) => (await handlers()).observe(ctx) }],
    // Any AI turn replying to a voice note or audio file gets its words (the plain answer, the premium phrase, any
    // plugin's ctx.ai.respond). A known transcript needs no audio key, so this declares no `needs`: it says itself
    // when it would have to listen.
    quotedWords: [{ media: ['voice', 'audio'], read: async (ctx, quoted) => (await handlers()).readQuoted(ctx, quoted) }],
    // A watched chat's notes, for the plugin that keeps it when the owner chose transcripts: within the length limit,
    // the owner's cost (no sender's allowance: the sender never asked the bot for anything), nothing archived here.
    watchedWords: [{ media: ['voice', 'audio'], needs: ['audio'], read: async (message) => (await handlers()).listenWatched(message.media) }],
    media: [
      {
        media: ['voice', 'audio'],
        help: 'voice notes are transcribed and answered like text; reply to one (yours, someone\'s or mine) with a question and I answer from what it says',
        needs: ['audio'],
        missing: () => `I can't hear voice notes right now: ${audioDetail()}. Please type your message instead.`,
        run: async (ctx) => (await handlers()).answer(ctx),
      },
    ],
    commands: [
      {
        command: 'vn',
        help: 'search the voice notes of this chat by words (e.g. invoice)',
        usage: '.vn <words>',
        needs: ['audio'],
        missing: () => `Voice-note search is off right now: ${audioDetail()}. Without a usable audio key nothing is archived.`,
        run: async (ctx) => (await handlers()).searchCommand(ctx),
      },
      {
        command: 'voice',
        help: 'voice notes in this chat: spoken replies (on|off), the mode (answer, transcript, text-only, tldr, off), a note\'s whole text (full)',
        usage: '.voice [on|off|answer|transcript|text-only|tldr|mode off|full]',
        needs: ['audio'],
        missing: () => `Voice replies are off right now: ${audioDetail()}.`,
        run: async (ctx) => (await handlers()).voiceCommand(ctx),
      },
    ],
    tools: [searchTool],
    async stop() {
      // Handlers never made have no archive writes pending; ones being made are waited for.
      const made = await latest?.catch(() => undefined);
      await made?.flush();
      await host.store.flush();
    },
  };
}

/** Whether there is a voice archive (a chat in the store, or a folder under the archive's), that is, anything to convert. */
async function hasArchive(host: PluginHost<VoiceOptions>): Promise<boolean> {
  if ((await host.store.chats(VOICE_ARCHIVE)).length) return true;
  return (await readdir(host.files.folder(ARCHIVE_FOLDER)).catch(() => [] as string[])).length > 0;
}

/** The start-log sentence on voice replies: on for whom, or off and why. */
function voiceRepliesLine(keys: number, enabled: boolean, ffmpeg: boolean): string {
  if (!keys) return 'voice replies are off: no audio key (AUDIO_API_KEYS), so there is no speech endpoint';
  if (!ffmpeg) return 'voice replies are off: ffmpeg is not available to make voice notes';
  if (!enabled) return 'voice replies are off by default (plugins.voice.replies.enabled is false); chats can turn them on with .voice on';
  return 'voice replies are on: voice notes are answered with voice notes (chats can turn them off with .voice off)';
}

export default createVoicePlugin();
