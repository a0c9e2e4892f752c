import { mimeFor } from '../../services/media/mime-type.js';
import { existsSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import readline from 'node:readline';
import type { IncomingMedia, IncomingMessage, MediaKind, OutgoingContact, OutgoingLocation, OutgoingMedia, OutgoingPoll, SentMessage } from '../../kernel/port/message.js';
import { contactsLine, locationLine, phoneNumber } from '../../kernel/port/shared.js';
import type { InboundHandler, SessionState, Transport, TransportEvents } from '../../kernel/port/transport.js';
import type { AbovePrompt } from './above-prompt.js';
import { KeptFiles } from './kept-files.js';

/** The default console sender (digits). Change it with `:as <id>`. */
export const CONSOLE_DEFAULT_SENDER = '10000000001';

/** Every `:` command the console takes, as the banner and the unknown-command line list them. */
export const CONSOLE_COMMANDS = [':as <id>', ':group <name>', ':dm', ':voice <file>', ':audio <file>', ':image <file> [caption]', ':video <file> [caption]', ':document <file> [caption]', ':sticker <file>', ':reply <text>', ':quote <text>', ':fromme <text>', ':vote <n>[,<m>…]', ':location <lat> <long> [name]', ':contact <name> <number>', ':sleep <ms>', ':react <emoji>', ':self', ':quit'] as const;

/**
 * The bot's own id in the console (as a linked WhatsApp account has one), so `@10000000000` addresses the bot in a
 * console group even before `targetUserIds` is filled in; the ids in `targetUserIds` work too.
 */
export const CONSOLE_BOT_ID = '10000000000';

/** Waiting input lines past which the console stops reading its input, and below which it reads again. */
const WAITING_HIGH = 64;
const WAITING_LOW = 8;

export interface ConsoleOptions {
  input?: NodeJS.ReadableStream;
  output?: NodeJS.WritableStream;
  /** Where console errors go (not bot actions): stderr by default. */
  errors?: NodeJS.WritableStream;
  sender?: string;
  cwd?: string;
  /**
   * Config `conversation.debounceMs` as the file sets it (undefined when unset). Set: consecutive text lines of one
   * sender go in without waiting for each answer, so the core answers them as one turn. Unset: 1500 ms in a terminal,
   * and piped input keeps every line its own message.
   */
  debounceMs?: number;
  /**
   * In a terminal, the log's warnings and errors: written above the prompt (never into what is being typed). Given
   * the prompt once the console shows one.
   */
  logs?: AbovePrompt;
}

/**
 * The console transport (`npm run chat`): a terminal chat with the real bot. Each input line is one message;
 * lines starting with `:` are console commands (see docs/owners/console-chat.md). Everything the bot does
 * is printed on stdout, one action per line: `bot> text`, `bot [react] 👍`, `bot [audio] <path>`, …
 * When input is not a terminal, lines are handled strictly in order and `done` resolves at end of input once all
 * work has finished.
 */
export class ConsoleTransport implements Transport {
  /** A printed line stays as printed: a long turn's status is shown once, never edited (see `Transport.editsMessages`). */
  readonly editsMessages = false;
  readonly name = 'console';
  private readonly input: NodeJS.ReadableStream;
  private readonly output: NodeJS.WritableStream;
  private readonly errors: NodeJS.WritableStream;
  private readonly cwd: string;
  private sender: string;
  /** The person at the terminal (the first sender): counts as an owner; `:as` speaks as someone else. */
  private readonly operator: string;
  private group: string | undefined;
  /** Set by `:self`: lines are the account's own, in its "Message yourself" chat (until `:dm`, `:group` or `:as`). */
  private inSelfChat = false;
  private seq = 0;
  /** The bot's last message per chat, for `:reply` (with its media, so a reply to a photo or voice note the bot sent quotes it). */
  private readonly lastBot = new Map<string, { id: string; text: string; media?: IncomingMedia }>();
  private readonly lastOther = new Map<string, IncomingMessage>();
  /** Each chat's last poll, for `:vote`. */
  private readonly lastPoll = new Map<string, { id: string; poll: OutgoingPoll }>();
  private events: TransportEvents = {};
  private handler: InboundHandler | undefined;
  private rl: readline.Interface | undefined;
  private resolveDone!: () => void;
  /** Resolves at end of input (or `:quit`) once every line has been handled. */
  readonly done: Promise<void> = new Promise((resolve) => (this.resolveDone = resolve));

  constructor(options: ConsoleOptions = {}) {
    this.input = options.input ?? process.stdin;
    this.output = options.output ?? process.stdout;
    this.errors = options.errors ?? process.stderr;
    this.sender = options.sender ?? CONSOLE_DEFAULT_SENDER;
    this.operator = this.sender;
    this.cwd = options.cwd ?? process.cwd();
    this.debounceMs = options.debounceMs;
    this.logs = options.logs;
  }

  private readonly logs: AbovePrompt | undefined;
  /** True while the prompt waits for typing (a terminal only): log lines are then written above it. */
  private promptShown = false;

  private readonly debounceMs: number | undefined;

  /** The burst window when config.json sets none: a person typing in a terminal; piped lines stay apart. */
  get defaultDebounceMs(): number {
    return this.interactive ? 1500 : 0;
  }

  /**
   * When config.json sets none: a status after 8 s for a person typing in a terminal; none for piped input, whose
   * output scripts read line by line (a slow machine must not add lines to it).
   */
  get defaultProgressAfterSeconds(): number {
    return this.interactive ? 8 : 0;
  }

  private get interactive(): boolean {
    return Boolean((this.input as NodeJS.ReadStream).isTTY);
  }

  private chatId(): string {
    if (this.inSelfChat) return `${CONSOLE_BOT_ID}@s.whatsapp.net`;
    return this.group ? `${this.group}@g.us` : `${this.sender}@s.whatsapp.net`;
  }

  private outputClosed = false;
  /** Printed files stay readable until the console exits, even those the bot removes right after sending. */
  private readonly keptFiles = new KeptFiles();

  private print(line: string): void {
    if (this.outputClosed) return;
    // In a terminal, an answer that comes while the prompt waits (a burst answered later, a reminder) goes above it.
    if (this.promptShown) {
      this.clearPrompt();
      this.output.write(`${line}\n`);
      this.rl?.prompt(true);
      return;
    }
    this.output.write(`${line}\n`);
  }

  /** Wipes the prompt line (a terminal only), so what comes next is written where it was. */
  private clearPrompt(): void {
    readline.clearLine(this.output, 0);
    readline.cursorTo(this.output, 0);
  }

  private complain(text: string): void {
    this.errors.write(`console: ${text}\n`);
  }

  async start(onMessage: InboundHandler, events: TransportEvents = {}): Promise<void> {
    this.events = events;
    this.handler = onMessage;
    // A reader that goes away (`| head -1`) closes the pipe: stop printing and end quietly instead of crashing.
    this.output.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') throw err;
      this.outputClosed = true;
      this.rl?.close();
    });
    const rl = readline.createInterface({ input: this.input, output: this.interactive ? this.output : undefined, terminal: this.interactive });
    this.rl = rl;
    if (this.interactive) {
      this.complain(`chatting as ${this.sender} in a private chat; in a group mention the bot as @${CONSOLE_BOT_ID}. Commands: ${CONSOLE_COMMANDS.join(', ')}`);
      rl.setPrompt('you> ');
      this.showPrompt();
      this.logs?.attach({
        shown: () => this.promptShown,
        clear: () => this.clearPrompt(),
        redraw: () => rl.prompt(true),
      });
      // A terminal in raw mode turns Ctrl-C into a readline event, not a signal: hand it on, so Ctrl-C stops the
      // console cleanly like SIGINT does (and a second Ctrl-C exits at once).
      rl.on('SIGINT', () => process.kill(process.pid, 'SIGINT'));
    }
    // Lines are handled one after another: the next line waits until the previous one's handling has finished.
    // Piped input arrives far faster than the bot answers: the waiting lines are plain strings in one array, and past
    // WAITING_HIGH of them the input is paused (resumed at WAITING_LOW), so a long file is never all in memory at once
    // as pending work (a promise and a closure per line made every garbage collection copy them all).
    const waiting: string[] = [];
    let paused = false;
    let handling = false;
    let closed = false;
    let quit = false;
    // With a burst window, text lines go in without waiting for their answers (the core makes one turn of them);
    // a `:` line (other than `:sleep`) and the end of input wait for them.
    const merging = (this.debounceMs ?? this.defaultDebounceMs) > 0;
    const outstanding = new Set<Promise<void>>();
    const settleOutstanding = async () => {
      while (outstanding.size) await Promise.all(outstanding);
    };
    const finish = () => void settleOutstanding().then(() => this.resolveDone());
    const handleWaiting = async () => {
      handling = true;
      for (let line = waiting.shift(); line !== undefined; line = waiting.shift()) {
        if (paused && waiting.length <= WAITING_LOW && !closed) {
          paused = false;
          rl.resume();
        }
        if (quit) continue;
        if (line.includes(':quit') && line.trim() === ':quit') {
          quit = true;
          rl.close();
          continue;
        }
        if (merging && !line.startsWith(':')) {
          const sent: Promise<void> = this.handleLine(line)
            .catch((err: unknown) => this.complain((err as Error).message))
            .then(() => this.keptFiles.restoreRemoved())
            .finally(() => outstanding.delete(sent));
          outstanding.add(sent);
          if (outstanding.size >= WAITING_HIGH) await settleOutstanding();
          if (this.interactive && !quit) this.showPrompt();
          continue;
        }
        if (line.startsWith(':') && !line.startsWith(':sleep')) await settleOutstanding();
        try {
          await this.handleLine(line);
        } catch (err) {
          this.complain((err as Error).message);
        }
        await this.keptFiles.restoreRemoved();
        if (this.interactive && !quit) this.showPrompt();
      }
      handling = false;
      if (closed) finish();
    };
    rl.on('line', (line) => {
      this.promptShown = false;
      waiting.push(line);
      if (!paused && waiting.length >= WAITING_HIGH) {
        paused = true;
        rl.pause();
      }
      if (!handling) void handleWaiting();
    });
    rl.on('close', () => {
      closed = true;
      if (!handling) finish();
    });
  }

  private showPrompt(): void {
    this.rl?.prompt();
    this.promptShown = true;
  }

  async stop(): Promise<void> {
    await this.keptFiles.removeAll();
    this.logs?.attach(undefined);
    this.promptShown = false;
    this.rl?.close();
    this.handler = undefined;
  }

  /** Ids unique across runs, so a chat's history never holds two messages with one id. */
  private readonly run = Date.now().toString(36);

  private nextId(kind: 'in' | 'bot'): string {
    return `console-${this.run}-${kind}-${++this.seq}`;
  }

  /** Handles one input line: a console command or a message. */
  handleLine(line: string): Promise<void> {
    // A line from readline is a slice of the input chunk it came in: copied, so the message (kept in the history and
    // logs) does not pin that chunk in memory. Joining a character and slicing it off again makes V8 write the text
    // out anew (a third of the cost of a round trip through a Buffer, on every line).
    const trimmed = (line.endsWith('\r') ? line.slice(0, -1) : line).concat('\n').slice(0, -1);
    // A plain message (most lines) goes straight to the bot: no async frame of its own.
    if (!trimmed.startsWith(':')) return this.deliver(trimmed);
    return this.handleCommand(trimmed);
  }

  private async handleCommand(trimmed: string): Promise<void> {
    const space = trimmed.indexOf(' ');
    const cmd = space === -1 ? trimmed : trimmed.slice(0, space);
    const rest = space === -1 ? '' : trimmed.slice(space + 1).trim();
    switch (cmd) {
      case ':as': {
        const id = rest.replace(/^\+/, '');
        if (!/^\d{3,30}$/.test(id)) return this.complain(':as needs digits, e.g. :as 6281234567890');
        this.sender = id;
        this.inSelfChat = false;
        return;
      }
      case ':group': {
        if (!rest) return this.complain(':group needs a name, e.g. :group friends');
        // The name is kept as typed: file names are encoded by the stores, so "my friends" and "my-friends" stay apart.
        this.group = rest;
        this.inSelfChat = false;
        return;
      }
      case ':dm':
        this.group = undefined;
        this.inSelfChat = false;
        return;
      case ':self':
        // The account's own "Message yourself" chat: the person at the machine writes there as the account.
        this.group = undefined;
        this.inSelfChat = true;
        return;
      case ':sleep': {
        const ms = Number(rest);
        if (!rest || !Number.isInteger(ms) || ms < 0 || ms > 600_000) return this.complain(':sleep needs milliseconds (0 to 600000), e.g. :sleep 2000');
        await new Promise((resolve) => setTimeout(resolve, ms));
        return;
      }
      case ':voice':
      case ':audio':
      case ':image':
      case ':video':
      case ':document':
      case ':sticker':
        return this.sendMediaLine(cmd.slice(1) === 'voice' ? 'voice' : (cmd.slice(1) as MediaKind), rest);
      case ':reply': {
        const last = this.lastBot.get(this.chatId());
        if (!last) return this.complain('the bot has not said anything in this chat yet: nothing to reply to');
        return this.deliver(rest, { quoted: { id: last.id, senderId: `${CONSOLE_BOT_ID}@s.whatsapp.net`, text: last.text, fromBot: true, ...(last.media ? { media: last.media } : {}) } });
      }
      case ':fromme': {
        if (!rest) return this.complain(':fromme needs a text, e.g. :fromme I will answer this myself');
        return this.deliver(rest, { fromMe: true });
      }
      case ':quote': {
        const last = this.lastOther.get(this.chatId());
        if (!last) return this.complain('no earlier message in this chat to quote');
        return this.deliver(rest, { quoted: { id: last.id, senderId: last.senderId, text: last.text, fromBot: false, media: last.media } });
      }
      case ':vote':
        return this.vote(rest);
      case ':location':
        return this.locationLine(rest);
      case ':contact':
        return this.contactLine(rest);
      case ':react': {
        const last = this.lastBot.get(this.chatId());
        if (!last) return this.complain('the bot has not said anything in this chat yet: nothing to react to');
        if (!rest) return this.complain(':react needs an emoji, e.g. :react 👍');
        await this.events.onReaction?.({ chatId: this.chatId(), messageId: last.id, senderId: `${this.sender}@s.whatsapp.net`, emoji: rest.trim() });
        return;
      }
      default:
        return this.complain(`unknown console command ${cmd}; use ${CONSOLE_COMMANDS.join(', ')}`);
    }
  }

  /** `:vote 2` or `:vote 1,3`: the current sender votes on this chat's last poll (the options they hold now). */
  private async vote(rest: string): Promise<void> {
    const last = this.lastPoll.get(this.chatId());
    if (!last) return this.complain('the bot has sent no poll in this chat: nothing to vote on');
    const count = last.poll.options.length;
    if (!/^\d+(\s*,\s*\d+)*$/.test(rest)) return this.complain(`:vote needs option numbers, e.g. :vote 2 or :vote 1,3 (1 to ${count})`);
    const picks = [...new Set(rest.split(',').map((n) => Number(n.trim())))];
    if (picks.some((n) => n < 1 || n > count)) return this.complain(`that poll has options 1 to ${count}`);
    if (picks.length > 1 && !last.poll.multiple) return this.complain('that poll takes one choice: :vote <n>');
    await this.events.onPollVote?.({ chatId: this.chatId(), pollId: last.id, voterId: `${this.sender}@s.whatsapp.net`, voterName: `user ${this.sender}`, question: last.poll.question, selected: picks.map((n) => last.poll.options[n - 1]) });
  }

  /** `:location <lat> <long> [name]`: the current sender shares a place, as WhatsApp's location message. */
  private async locationLine(rest: string): Promise<void> {
    const m = /^(-?\d+(?:\.\d+)?)\s+(-?\d+(?:\.\d+)?)(?:\s+(.+))?$/.exec(rest);
    const latitude = Number(m?.[1]);
    const longitude = Number(m?.[2]);
    if (!m || Math.abs(latitude) > 90 || Math.abs(longitude) > 180) return this.complain(':location needs a latitude (-90 to 90) and a longitude (-180 to 180), then a name if you like, e.g. :location 48.8584 2.2945 Eiffel Tower');
    const location = { latitude, longitude, ...(m[3] ? { name: m[3].trim() } : {}) };
    return this.deliver(locationLine(location), { relayed: 'location', location });
  }

  /** `:contact <name> <number>`: the current sender shares a contact card (the last word is the number). */
  private async contactLine(rest: string): Promise<void> {
    const space = rest.lastIndexOf(' ');
    const name = space === -1 ? '' : rest.slice(0, space).trim();
    const number = phoneNumber(space === -1 ? rest : rest.slice(space + 1));
    if (!name || !number) return this.complain(':contact needs a name and a phone number, e.g. :contact Ann Lee +6281234567890');
    const contacts = [{ name, numbers: [number] }];
    return this.deliver(contactsLine(contacts), { relayed: 'contact card', contacts });
  }

  private async sendMediaLine(kind: MediaKind, rest: string): Promise<void> {
    const space = rest.indexOf(' ');
    const file = space === -1 ? rest : rest.slice(0, space);
    const caption = space === -1 ? '' : rest.slice(space + 1).trim();
    const sample = { image: 'photo.jpg', sticker: 'sticker.webp', video: 'clip.mp4', document: 'file.pdf', voice: 'note.ogg', audio: 'song.mp3' }[kind];
    if (!file) return this.complain(`:${kind} needs a file, e.g. :${kind} ./${sample}`);
    const full = path.resolve(this.cwd, file);
    if (!existsSync(full) || !statSync(full).isFile()) return this.complain(`file not found: ${file}`);
    const media: IncomingMedia = {
      kind,
      mimetype: mimeFor(full, kind === 'image' ? 'image/jpeg' : kind === 'video' ? 'video/mp4' : kind === 'sticker' ? 'image/webp' : kind === 'document' ? 'application/octet-stream' : 'audio/ogg'),
      fileName: path.basename(full),
      size: statSync(full).size,
      download: () => readFile(full),
    };
    return this.deliver(caption, { media });
  }

  private deliver(text: string, extra?: Pick<IncomingMessage, 'quoted' | 'media' | 'fromMe' | 'relayed' | 'location' | 'contacts'>): Promise<void> {
    if (!this.handler) return Promise.resolve();
    // "@628…" at the start or after a space is a mention, as WhatsApp inserts it; "foo@628….com" is not.
    const mentions = text.includes('@') ? [...text.matchAll(/(?:^|\s)@(\d{3,30})(?![\w.@-]*\w)/g)].map((m) => `${m[1]}@s.whatsapp.net`) : [];
    const message: IncomingMessage = {
      id: this.nextId('in'),
      chatId: this.chatId(),
      senderId: `${this.inSelfChat ? CONSOLE_BOT_ID : this.sender}@s.whatsapp.net`,
      senderName: this.inSelfChat ? 'owner (self-chat)' : `user ${this.sender}`,
      isGroup: Boolean(this.group),
      text,
      mentions,
      timestamp: Date.now(),
    };
    // Added, not spread in: a literal with a spread is copied property by property on every line.
    if (extra?.quoted) message.quoted = extra.quoted;
    if (extra?.media) message.media = extra.media;
    if (extra?.relayed) message.relayed = extra.relayed;
    if (extra?.location) message.location = extra.location;
    if (extra?.contacts) message.contacts = extra.contacts;
    if (extra?.fromMe) {
      // Typed "on the phone": the account's own message in this chat, not the bot's and not the current sender's.
      message.fromMe = true;
      message.senderId = `${CONSOLE_BOT_ID}@s.whatsapp.net`;
      message.senderName = 'owner (phone)';
      return this.handler(message);
    }
    if (this.sender === this.operator || this.inSelfChat) message.fromOperator = true;
    this.lastOther.set(message.chatId, message);
    return this.handler(message);
  }

  /**
   * `bot` for the current chat; `bot [to <chat id>]` for any other chat (owner notices, reminders), so what the bot
   * sends elsewhere is seen and never mistaken for an answer here.
   */
  private label(chatId: string): string {
    return chatId === this.chatId() ? 'bot' : `bot [to ${chatId}]`;
  }

  async sendText(chatId: string, text: string): Promise<SentMessage> {
    const id = this.nextId('bot');
    this.lastBot.set(chatId, { id, text });
    const label = this.label(chatId);
    this.print(`${label === 'bot' ? 'bot>' : label} ${text.split('\n').join('\n  ')}`);
    return { id };
  }

  /** The console cannot change a printed line (`editsMessages`): callers fall back to sending a new message. */
  async editText(): Promise<boolean> {
    return false;
  }

  async react(chatId: string, _messageId: string, emoji: string): Promise<void> {
    this.print(`${this.label(chatId)} [react] ${emoji}`);
  }

  async sendMedia(chatId: string, media: OutgoingMedia): Promise<SentMessage> {
    const id = this.nextId('bot');
    const kind = media.kind === 'voice' ? 'audio' : media.kind;
    const file = path.resolve(media.path);
    await this.keptFiles.keep(file);
    // As WhatsApp would: the quoted media is the file as sent (while it is there; the bot removes its own files later).
    this.lastBot.set(chatId, { id, text: media.caption ?? '', media: { kind: media.kind, mimetype: media.mimetype ?? 'application/octet-stream', ...(media.fileName ? { fileName: media.fileName } : {}), download: () => readFile(file) } });
    this.print(`${this.label(chatId)} [${kind}] ${path.resolve(media.path)}${media.caption ? `\n  ${media.caption.split('\n').join('\n  ')}` : ''}`);
    return { id };
  }

  async sendLocation(chatId: string, location: OutgoingLocation): Promise<SentMessage> {
    const id = this.nextId('bot');
    const name = [location.name, location.address].filter(Boolean).join(', ').replace(/\s*\n\s*/g, ' ');
    this.lastBot.set(chatId, { id, text: name });
    this.print(`${this.label(chatId)} [location] ${location.latitude} ${location.longitude}${name ? ` ${name}` : ''}`);
    return { id };
  }

  async sendContact(chatId: string, contact: OutgoingContact): Promise<SentMessage> {
    const id = this.nextId('bot');
    const name = contact.name.replace(/\s*\n\s*/g, ' ');
    this.lastBot.set(chatId, { id, text: name });
    this.print(`${this.label(chatId)} [contact] ${name} ${contact.number}`);
    return { id };
  }

  async sendPoll(chatId: string, poll: OutgoingPoll): Promise<SentMessage> {
    const id = this.nextId('bot');
    this.lastPoll.set(chatId, { id, poll });
    this.lastBot.set(chatId, { id, text: poll.question });
    const options = poll.options.map((o, i) => `\n  ${i + 1}. ${o}`).join('');
    this.print(`${this.label(chatId)} [poll] ${poll.question.replace(/\s*\n\s*/g, " ")}${options}`);
    return { id };
  }

  async setTyping(): Promise<void> {}

  ownIds(): string[] {
    return [`${CONSOLE_BOT_ID}@s.whatsapp.net`];
  }

  operatorChatId(): string {
    return `${this.operator}@s.whatsapp.net`;
  }

  session(): SessionState {
    return { status: 'linked', me: { name: 'console', id: `${CONSOLE_BOT_ID}@s.whatsapp.net` } };
  }
}
