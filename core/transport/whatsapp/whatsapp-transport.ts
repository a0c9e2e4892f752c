import type { Settings } from '../../config/settings.js';
import type { BotConfig } from '../../config/schema.js';
import type { Logger } from '../../log/logger.js';
import type { InboundHandler, SessionState, Transport } from '../transport.js';
import type { OutgoingMedia, SentMessage } from '../message.js';

export interface WhatsAppTransportOptions {
  settings: Settings;
  config: () => BotConfig;
  log: Logger;
}

/** Placeholder until the Baileys adapter lands (issue 4): refuses to start and says so. */
export class WhatsAppTransport implements Transport {
  readonly name = 'whatsapp';
  constructor(private readonly options: WhatsAppTransportOptions) {}
  async start(_onMessage: InboundHandler): Promise<void> {
    throw new Error('the WhatsApp transport is not built yet; use npm run chat for the console chat');
  }
  async stop(): Promise<void> {}
  async sendText(): Promise<SentMessage> { throw new Error('not connected'); }
  async editText(): Promise<boolean> { return false; }
  async react(): Promise<void> {}
  async sendMedia(_c: string, _m: OutgoingMedia): Promise<SentMessage> { throw new Error('not connected'); }
  async setTyping(): Promise<void> {}
  ownIds(): string[] { return []; }
  session(): SessionState { return { status: 'offline' }; }
}
