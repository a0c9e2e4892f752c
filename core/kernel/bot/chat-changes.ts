import type { Logger } from '../../services/log/logger.js';
import type { PrivacyRegistry } from '../../services/store/privacy.js';
import type { PersonIds } from '../port/privacy-participant.js';
import type { BurstTurns } from '../pipeline/burst-turns.js';
import type { Bursts } from '../pipeline/bursts.js';
import type { ChatQueue } from '../pipeline/chat-queue.js';
import type { DeletedMessages } from '../pipeline/deleted-messages.js';
import type { ChangeSender } from '../port/transport.js';
import type { TransportLink } from './transport-link.js';

export interface ChatChangesDeps {
  queue: ChatQueue;
  bursts: Pick<Bursts, 'flushChat'>;
  /** Every store that keeps something about people: what a change applies to. */
  privacy: Pick<PrivacyRegistry, 'revoke' | 'edit' | 'moveChat'>;
  burstTurns: BurstTurns;
  deletedMessages: DeletedMessages;
  link: TransportLink;
  log: Logger;
}

/**
 * Changes the network reports to what the bot already kept: deletes for everyone, edits, and a private chat's move to
 * a new id. Each is queued behind the chat's messages (a change must find what it changes) and never rejects.
 */
export class ChatChanges {
  /** Chat moves that failed part-way (new id → old id), tried again at the chat's next message. */
  private readonly unfinishedMoves = new Map<string, string>();

  constructor(private readonly deps: ChatChangesDeps) {}

  /** The chat `chatId` was moved to whose move is not finished yet (its old id), if any. */
  unfinishedMoveTo(chatId: string): string | undefined {
    return this.unfinishedMoves.get(chatId);
  }

  /**
   * A private chat is known as `to` from now on instead of `from` (WhatsApp moved it from its LID to the phone
   * number): every store — history, memory, the plugins' — moves what it keeps under `from` (see
   * `PrivacyParticipant.moveChat`). Queued behind the messages of `from` still being handled or waiting for their
   * burst window, so an answer under way is written before its chat's files move, never after (where it would bring
   * the old id's file back). Never rejects.
   */
  moveChat(from: string, to: string): Promise<void> {
    const { bursts, queue, privacy, log } = this.deps;
    bursts.flushChat(from);
    this.unfinishedMoves.delete(to);
    return queue.behind(
      from,
      async () => {
        await privacy.moveChat(from, to);
        log.info({ from, to }, "a private chat is known by its phone number from now on: what was kept under its LID moved with it");
      },
      (err) => {
        // Moving again is safe (every store merges, a second run adds no duplicates): the chat's next message retries.
        this.unfinishedMoves.set(to, from);
        log.error({ err, from, to }, "could not move all of a private chat's data to its new id: what could not move stays under the old id for now, and the chat's next message tries again");
      },
    );
  }

  /**
   * A message deleted for everyone: removed from history, memory, the voice archive and its index (every privacy
   * participant). Honoured as WhatsApp honours it: from the message's own sender, or in a group from an admin (read
   * from the group's metadata), or from the linked account itself; a member's delete of someone else's message
   * removes nothing (`by` is who sent the delete, as the transport authenticated it; without it the transport vouches).
   * Queued behind the chat's messages, so a delete that arrives while its message is being handled still finds it.
   * Never rejects.
   */
  revoke(chatId: string, messageId: string, by?: ChangeSender): Promise<void> {
    const { queue, privacy, burstTurns, deletedMessages, link, log } = this.deps;
    return queue.behind(
      chatId,
      async () => {
        const admin = by && !by.fromMe && link.isGroup(chatId) && (await link.isGroupAdmin(chatId, by.ids));
        const author = admin ? undefined : authorOf(by);
        // A message merged into a burst was stored as part of its turn: the whole turn goes (never its words left).
        const turn = await burstTurns.turnOf(chatId, messageId);
        const removed = await privacy.revoke(chatId, turn.id, author);
        // Remembered by its own id (a quote names that one), for the honoured sender only: a later reply quoting it
        // must not fetch it again through the quote.
        await deletedMessages.note(chatId, messageId, author);
        if (author && !removed) log.info({ chat: chatId, messageId }, 'a delete for everyone removed nothing: the stored message (if any) is not the sender\'s own, and they are no group admin');
        else log.info({ chat: chatId, messageId, removed }, 'a message deleted for everyone was removed from the stored data');
      },
      (err) => log.error({ err, chat: chatId, messageId }, 'could not remove a message deleted for everyone'),
    );
  }

  /**
   * An edited message: its new text replaces the old in history, the recall log and the voice archive's context
   * (every privacy participant), so neither the prompt nor a search finds the old words. Only the message's own
   * sender edits it (WhatsApp lets nobody else, admins neither). Queued like `revoke`; never rejects.
   */
  edit(chatId: string, messageId: string, text: string, by?: ChangeSender): Promise<void> {
    const { queue, privacy, burstTurns, log } = this.deps;
    return queue.behind(
      chatId,
      async () => {
        // A turn merged from a burst holds the other messages' words too: an edit of one of them cannot be applied
        // line by line, so the turn is removed (the old words must not stay), as a delete would.
        const turn = await burstTurns.turnOf(chatId, messageId);
        if (turn.merged) {
          const removed = await privacy.revoke(chatId, turn.id, authorOf(by));
          log.info({ chat: chatId, messageId, removed }, 'an edited message was part of a burst: the turn that carried it was removed from the stored data');
          return;
        }
        const changed = await privacy.edit(chatId, messageId, text, authorOf(by));
        log.info({ chat: chatId, messageId, changed }, changed ? 'an edited message was applied to the stored data' : 'an edit changed nothing stored (the message is not kept, or it is not the editor\'s own)');
      },
      (err) => log.error({ err, chat: chatId, messageId }, 'could not apply an edited message to the stored data'),
    );
  }
}

/** Whose stored items a change from `by` may touch: any (undefined) for the account itself or a vouching transport, else only theirs. */
function authorOf(by: ChangeSender | undefined): PersonIds | undefined {
  return by && !by.fromMe ? by.ids : undefined;
}
