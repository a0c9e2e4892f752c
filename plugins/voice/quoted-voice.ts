import { type IncomingMedia, type MessageContext, type PluginHost, type QuotedMessage, type QuotedWords } from '../../core/index.js';
import type { AudioArchive } from './archive.js';
import type { VoiceOptions } from './options.js';
import { VoiceError, type Transcript } from './transcriber.js';
import { SENT_VOICE_REPLIES, VOICE_RECEIVED } from './stores.js';

export { SENT_VOICE_REPLIES, VOICE_RECEIVED } from './stores.js';

type Ctx = MessageContext<VoiceOptions>;

/**
 * What the archive holds for message `messageId` of chat `chatId` (only that chat's archive is read): its transcript,
 * that it was erased (deleted for everyone, or with its person's data), or undefined when it holds none.
 *
 * @example
 * await archivedTranscript(archive, '123@g.us', '3EB0…'); // { transcript: 'the invoice is paid' }
 */
export async function archivedTranscript(archive: AudioArchive, chatId: string, messageId: string): Promise<{ transcript: string } | { removed: true } | undefined> {
  const note = await archive.noteOf(chatId, messageId);
  if (!note) return undefined;
  return note.removed ? { removed: true } : { transcript: note.transcript };
}

export interface QuotedVoiceDeps {
  host: PluginHost<VoiceOptions>;
  archive: () => AudioArchive;
  /** Downloads, checks (length, allowance) and transcribes audio for this turn's sender; throws VoiceError with a sentence. */
  listen: (ctx: Ctx, media: IncomingMedia) => Promise<Transcript>;
  /** Why audio cannot be heard now, or undefined when it can. */
  cannotHear: () => string | undefined;
}

/**
 * The voice plugin's offer to put a quoted voice note or audio file into words, for any AI turn that replies to one
 * (the core asks it: the plain answer, the premium phrase, any plugin's `ctx.ai.respond`). A note one person sent,
 * or a voice reply of the bot, is read from the archive (or the bot's record of what it said) when its transcript is
 * known, so it is never transcribed twice and costs no audio call; otherwise the audio is fetched through the quote
 * and transcribed now (then kept), and the answer says so. A note erased from the archive (its person's data
 * deleted, or deleted for everyone) is never fetched again; one WhatsApp no longer serves is said plainly.
 */
export function quotedVoice(deps: QuotedVoiceDeps) {
  const { host } = deps;

  /** Records that a voice note or audio file came into the chat unheard, with its sender, so a later quote may archive it. */
  async function keepReceived(ctx: Ctx): Promise<void> {
    const media = ctx.message.media!;
    await host.store.chat(ctx.chatId).log(VOICE_RECEIVED).append({ messageId: ctx.message.id, senderId: ctx.senderId, at: ctx.message.timestamp, kind: media.kind });
  }

  /** Records a voice reply the bot sent, so a later quote of it finds its words. */
  async function keepSentReply(ctx: Ctx, messageId: string, text: string): Promise<void> {
    await host.store.chat(ctx.chatId).log(SENT_VOICE_REPLIES).append({ messageId, answers: ctx.senderId, at: Date.now(), text });
  }

  async function knownWords(chatId: string, quoted: QuotedMessage): Promise<{ transcript: string } | { removed: true } | undefined> {
    if (!quoted.fromBot) return archivedTranscript(deps.archive(), chatId, quoted.id);
    const sent = (await host.store.chat(chatId).log(SENT_VOICE_REPLIES).read()).find((i) => i.messageId === quoted.id);
    return sent ? { transcript: sent.text } : undefined;
  }

  async function read(ctx: Ctx, quoted: QuotedMessage & { media: IncomingMedia }): Promise<QuotedWords> {
    const what = quoted.fromBot || quoted.media.kind === 'voice' ? 'voice note' : 'audio file';
    const known = await knownWords(ctx.chatId, quoted);
    // Erased with its person's data (or deleted for everyone): never fetched and transcribed again through the quote.
    if (known && 'removed' in known) return { unavailable: `I no longer have that ${what}: it was deleted from what I keep.` };
    if (known) return { words: known.transcript };
    // Never transcribed (sent while the bot could not hear, or before it kept its own replies): WhatsApp's copy, now.
    const why = deps.cannotHear();
    if (why) return { unavailable: `I never transcribed that ${what}, and I can't hear voice notes right now: ${why}.` };
    ctx.progress(`listening to the ${what} you replied to…`);
    let heard: Transcript;
    try {
      heard = await deps.listen(ctx, quoted.media);
    } catch (err) {
      if (!(err instanceof VoiceError)) throw err;
      return { unavailable: err.message };
    }
    // Provenance: a quote's id, sender and media come from the quoting client. Kept (so the next quote is not
    // transcribed again) only when this chat received that note before, under the sender recorded then; a note the
    // bot never received here — or a "voice reply of the bot" it has no record of — is answered from, never stored as
    // anyone's words (a forged quote would plant them in another's name).
    const received = quoted.fromBot ? undefined : (await host.store.chat(ctx.chatId).log(VOICE_RECEIVED).read()).find((i) => i.messageId === quoted.id);
    if (received) {
      await deps.archive().add(ctx.chatId, { messageId: quoted.id, senderId: received.senderId, at: received.at, transcript: heard.text, kind: quoted.media.kind === 'voice' ? 'voice' : 'audio', audio: { bytes: heard.audio, ext: heard.format.ext } });
      await host.store.chat(ctx.chatId).log(VOICE_RECEIVED).removeWhere((i) => i.messageId === quoted.id);
      return { words: heard.text, notice: `_(I had not transcribed that ${what} before, so I listened to it just now.)_` };
    }
    ctx.log.info({ quoted: quoted.id }, `a quoted ${what} this chat never received was heard for this answer only: not archived`);
    return { words: heard.text, notice: `_(I had not heard that ${what} before, so I listened to it just now; I keep nothing of it, since I never received it in this chat.)_` };
  }

  return { read, keepSentReply, keepReceived };
}
