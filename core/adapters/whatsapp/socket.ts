import type {
  AnyMessageContent,
  AuthenticationState,
  BaileysEventMap,
  GroupMetadata,
  MiscMessageGenerationOptions,
  SocketConfig,
  WAMessage,
  WAMessageKey,
  WAPresence,
} from '@whiskeysockets/baileys';
import type { LidMappingStore } from './identity.js';

/** The part of a Baileys socket the transport uses (the real `makeWASocket` result, or a fake in tests). */
export interface WhatsAppSocket {
  ev: {
    on<E extends keyof BaileysEventMap>(event: E, listener: (arg: BaileysEventMap[E]) => void): unknown;
    removeAllListeners(event?: keyof BaileysEventMap): unknown;
  };
  end(error: Error | undefined): void;
  sendMessage(jid: string, content: AnyMessageContent, options?: MiscMessageGenerationOptions): Promise<WAMessage | undefined>;
  sendPresenceUpdate(type: WAPresence, jid?: string): Promise<void>;
  /** Baileys' read receipts (blue ticks) for received messages. */
  readMessages(keys: WAMessageKey[]): Promise<void>;
  requestPairingCode(phoneNumber: string): Promise<string>;
  groupMetadata(jid: string): Promise<GroupMetadata>;
  /** Baileys' list of every group the account is in (their metadata, subjects included). */
  groupFetchAllParticipating?(): Promise<Record<string, GroupMetadata>>;
  updateMediaMessage?(message: WAMessage): Promise<WAMessage>;
  /** Baileys' check of the account's reach-out time-lock (a restriction); it also emits the answer in connection.update. */
  fetchAccountReachoutTimelock?(): Promise<unknown>;
  /** Baileys' rejectCall: declines a ringing call (`from` as the call event gave it). */
  rejectCall?(callId: string, callFrom: string): Promise<void>;
  /** Baileys' logout: tells WhatsApp to remove this linked device, then closes with 401 (logged out). */
  logout?(reason?: string): Promise<void>;
  /** Baileys' signal repository: its `lidMapping` store knows the phone of LIDs the session has met. */
  signalRepository?: { lidMapping?: LidMappingStore };
}

/** What the transport hands to the socket factory. */
export type SocketOptions = Partial<SocketConfig> & { auth: AuthenticationState };

/** Builds one socket. Default: Baileys' `makeWASocket` with the latest WhatsApp Web version when reachable. */
export type SocketFactory = (options: SocketOptions) => WhatsAppSocket | Promise<WhatsAppSocket>;

/**
 * How a layer above the connection (inbound, outbound, identity, chats) listens to a socket: it is handed each new
 * socket, with `isCurrent`, which turns false once that socket is replaced or closed.
 */
export type SocketListener = (socket: WhatsAppSocket, isCurrent: () => boolean) => void;
