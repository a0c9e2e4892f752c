import {
  addTransactionCapability,
  DEFAULT_CONNECTION_CONFIG,
  encodeBigEndian,
  encodeWAMessage,
  initAuthCreds,
  Curve,
  KEY_BUNDLE_TYPE,
  proto,
  unpadRandomMax16,
  xmppPreKey,
  xmppSignedPreKey,
  type BinaryNode,
  type SignalDataSet,
  type SignalDataTypeMap,
  type SignalKeyStore,
} from '@whiskeysockets/baileys';
import pino from 'pino';

/** The bot's pre-key bundle as it uploaded it (iq xmlns=encrypt type=set). */
export interface UploadedBundle {
  registrationId: number;
  identity: Uint8Array;
  signedPreKey: { keyId: number; publicKey: Uint8Array; signature: Uint8Array };
  preKeys: Map<number, Uint8Array>;
}

/** Where a person's device keeps the bot's session: one fixed address (Signal's crypto does not depend on it). */
export const BOT_ADDRESS = '10000000000@s.whatsapp.net';

const silent = pino({ level: 'silent' });

/**
 * One person's WhatsApp device on the wire server: its own Signal identity, pre-keys and sessions, kept by Baileys'
 * own Signal repository (the same code a real client runs), so what it encrypts the bot's real socket decrypts, and
 * what the bot encrypts to it is read back here.
 */
export class WireDevice {
  private readonly data: { [T in keyof SignalDataTypeMap]?: Record<string, SignalDataTypeMap[T]> } = {};
  private readonly creds = initAuthCreds();
  private readonly store: SignalKeyStore;
  private readonly repository;
  private nextPreKey = 1;

  constructor(
    /** The phone user (digits). */
    readonly user: string,
    /** The LID user (digits), when WhatsApp addresses this person by LID. */
    readonly lid?: string,
  ) {
    const store: SignalKeyStore = (this.store = {
      get: async (type, ids) => {
        const found: Record<string, any> = {};
        for (const id of ids) if (this.data[type]?.[id] !== undefined) found[id] = this.data[type]![id];
        return found;
      },
      set: async (set: SignalDataSet) => {
        for (const [type, entries] of Object.entries(set) as Array<[keyof SignalDataTypeMap, Record<string, unknown>]>) {
          const table = (this.data[type] ??= {}) as Record<string, unknown>;
          for (const [id, value] of Object.entries(entries ?? {})) {
            if (value === null || value === undefined) delete table[id];
            else table[id] = value;
          }
        }
      },
    });
    const keys = addTransactionCapability(store, silent, { maxCommitRetries: 1, delayBetweenTriesMs: 1 });
    this.repository = DEFAULT_CONNECTION_CONFIG.makeSignalRepository({ creds: this.creds, keys }, silent);
  }

  get phoneJid(): string {
    return `${this.user}@s.whatsapp.net`;
  }

  get lidJid(): string | undefined {
    return this.lid ? `${this.lid}@lid` : undefined;
  }

  /** This device's pre-key bundle with one fresh one-time pre-key, as the server answers a key fetch for `jid`. */
  async bundleNode(jid: string): Promise<BinaryNode> {
    const id = this.nextPreKey++;
    const pair = Curve.generateKeyPair();
    await this.store.set({ 'pre-key': { [id]: pair } });
    return {
      tag: 'user',
      attrs: { jid },
      content: [
        { tag: 'registration', attrs: {}, content: encodeBigEndian(this.creds.registrationId) },
        { tag: 'type', attrs: {}, content: KEY_BUNDLE_TYPE },
        { tag: 'identity', attrs: {}, content: this.creds.signedIdentityKey.public },
        xmppSignedPreKey(this.creds.signedPreKey),
        xmppPreKey(pair, id),
      ],
    };
  }

  /** Starts a session with the bot from its uploaded bundle, using (and so spending) one of its one-time pre-keys. */
  async startSession(bundle: UploadedBundle, preKeyId: number): Promise<void> {
    await this.repository.injectE2ESession({
      jid: BOT_ADDRESS,
      session: {
        registrationId: bundle.registrationId,
        identityKey: withKeyType(bundle.identity),
        signedPreKey: { ...bundle.signedPreKey, publicKey: withKeyType(bundle.signedPreKey.publicKey) },
        preKey: { keyId: preKeyId, publicKey: withKeyType(bundle.preKeys.get(preKeyId)!) },
      },
    });
  }

  async hasSession(): Promise<boolean> {
    return (await this.repository.validateSession(BOT_ADDRESS)).exists;
  }

  /** A message to the bot, Signal-encrypted as a phone encrypts it (padded protobuf). */
  encrypt(message: proto.IMessage): Promise<{ type: 'pkmsg' | 'msg'; ciphertext: Uint8Array }> {
    return this.repository.encryptMessage({ jid: BOT_ADDRESS, data: encodeWAMessage(message) });
  }

  /** A message from the bot, decrypted as this phone would. */
  async decrypt(type: 'pkmsg' | 'msg', ciphertext: Uint8Array): Promise<proto.Message> {
    const plain = await this.repository.decryptMessage({ jid: BOT_ADDRESS, type, ciphertext });
    return proto.Message.decode(unpadRandomMax16(plain));
  }

  /** A group message this person sends: the sender key's distribution (for a pkmsg/msg) and the skmsg. */
  encryptGroup(group: string, message: proto.IMessage): Promise<{ senderKeyDistributionMessage: Uint8Array; ciphertext: Uint8Array }> {
    return this.repository.encryptGroupMessage({ group, meId: this.senderJid, data: encodeWAMessage(message) });
  }

  /** Reads the bot's group message: its sender key first (from a pkmsg/msg it sent this device), then the skmsg. */
  async takeSenderKey(item: proto.Message.ISenderKeyDistributionMessage): Promise<void> {
    await this.repository.processSenderKeyDistributionMessage({ item, authorJid: BOT_ADDRESS });
  }

  async decryptGroup(group: string, ciphertext: Uint8Array): Promise<proto.Message> {
    return proto.Message.decode(unpadRandomMax16(await this.repository.decryptGroupMessage({ group, authorJid: BOT_ADDRESS, msg: ciphertext })));
  }

  /** The jid this person's messages carry as their author (the LID when it has one, as WhatsApp addresses now). */
  get senderJid(): string {
    return this.lidJid ?? this.phoneJid;
  }
}

/** Baileys' repository takes Signal public keys with their type byte (5) in front, as bundles carry them. */
function withKeyType(key: Uint8Array): Uint8Array {
  return key.length === 33 ? key : Buffer.concat([Buffer.from([5]), Buffer.from(key)]);
}
