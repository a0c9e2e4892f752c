import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { definePlugin, Store, Type, type AiService, type CapabilityStatus, type IncomingMedia, type MessageContext, type PluginHost } from '../../core/index.js';
import { atFirstUse, visionLegFilter, visionPathOf } from '../../core/builtin.js';
import { findImage } from './find-image.js';
import { visionOptions, type VisionOptions } from './options.js';

export { visionOptions, type VisionOptions } from './options.js';

/**
 * What answering about a picture needs (image preparation, video frames and sound, the vision call, formatting) loads
 * with the first photo or video asked about, not at start.
 */
const answering = atFirstUse(() => import('./answer.js'));

/**
 * The `vision` capability as it is now: per gateway leg, its live state and the path that last worked for images
 * ("not yet verified" before the first image); amber while some leg cannot answer, red when none can.
 */
export function visionStatus(ai: Pick<AiService, 'legs' | 'health'>): CapabilityStatus {
  const legs = ai.legs().filter(visionLegFilter(false));
  if (!legs.length) return { ok: false, detail: 'no gateway key (vision goes through a gateway)' };
  const health = new Map(ai.health().map((h) => [h.name, h]));
  const parts = legs.map((leg) => {
    const h = health.get(leg.name);
    const path = visionPathOf(leg);
    const via = path === 'messages' ? 'works via /v1/messages' : path === 'chat' ? 'works via /v1/chat/completions (no /v1/messages)' : 'not yet verified';
    return { usable: !h || h.state === 'healthy', text: `${leg.name}: ${h && h.state !== 'healthy' ? `${h.state === 'cooling-down' ? 'cooling down' : h.state}${h.lastError ? ` (${h.lastError})` : ''}; ` : ''}${via}` };
  });
  const usable = parts.filter((p) => p.usable).length;
  const detail = parts.map((p) => p.text).join('; ');
  if (!usable) return { ok: false, detail: `no gateway can look at images now: ${detail}` };
  return { ok: true, ...(usable < parts.length ? { degraded: true } : {}), detail };
}

/** Where received photos are kept (under data/media: swept after 30 days like all incoming media). */
const PHOTO_FILES = 'media/vision/files';

/**
 * One picture a chat received, kept so that a later reply quoting it finds it by its message id: a photo, or one of
 * the frames looked at of a video (`video`, several items of one message, in order). `messageId` is the id of the turn
 * that carried it — the id a delete for everyone is applied to (a turn joined from several messages goes whole) —
 * and `photoId` the picture's own message id when that differs (a photo of an album).
 */
const KEPT_PHOTOS = Store.chatLog(
  'photos',
  Type.Object({ messageId: Type.String(), photoId: Type.Optional(Type.String()), video: Type.Optional(Type.Boolean()), author: Type.String(), at: Type.Integer(), file: Type.String() }),
  {
    path: 'media/vision/chats',
    title: 'photos received',
    keepDays: 30,
    at: (item) => item.at,
    people: { author: (item) => item.author, messageId: (item) => item.messageId },
  },
);

/** What the shelf holds for a quoted message: its picture(s), or that they are gone (swept after 30 days). */
type KeptPictures = { pictures: Buffer[]; video: boolean } | { gone: true; video: boolean };

/** Keeps the pictures a chat sent (bytes under data/media/vision/files) and finds them again by message id. */
function photoShelf(host: PluginHost<VisionOptions>) {
  const dir = host.files.folder(PHOTO_FILES);
  /** Removes kept bytes no kept photo refers to any more (after a delete, a message deleted for everyone). */
  async function dropUnreferenced(): Promise<void> {
    const referenced = new Set<string>();
    for (const chat of await host.store.chats(KEPT_PHOTOS)) for (const item of await host.store.chat(chat).log(KEPT_PHOTOS).read()) referenced.add(item.file);
    for (const name of await readdir(dir).catch(() => [] as string[])) if (!referenced.has(name)) await rm(path.join(dir, name), { force: true });
  }
  const stop = host.store.onChange(KEPT_PHOTOS, () => void dropUnreferenced().catch((err) => host.log.warn({ err }, 'could not remove the bytes of deleted photos')));
  return {
    stop,
    /** Keeps one picture of this turn; `media.messageId` (a photo of an album) is the id a later quote names. */
    async keep(ctx: MessageContext<VisionOptions>, bytes: Buffer, media: IncomingMedia): Promise<void> {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      const file = `${Date.now()}-${randomBytes(8).toString('hex')}`;
      await writeFile(path.join(dir, file), bytes, { mode: 0o600 });
      const photoId = media.messageId && media.messageId !== ctx.message.id ? media.messageId : undefined;
      await host.store.chat(ctx.chatId).log(KEPT_PHOTOS).append({ messageId: ctx.message.id, ...(photoId ? { photoId } : {}), ...(media.kind === 'video' ? { video: true } : {}), author: ctx.senderId, at: Date.now(), file });
    },
    /** The pictures kept of message `messageId` of this chat (only this chat's list is read), if any were. */
    async find(chatId: string, messageId: string): Promise<KeptPictures | undefined> {
      const items = (await host.store.chat(chatId).log(KEPT_PHOTOS).read()).filter((i) => (i.photoId ?? i.messageId) === messageId);
      if (!items.length) return undefined;
      const video = items.some((i) => i.video);
      const pictures = (await Promise.all(items.map((i) => readFile(path.join(dir, i.file)).catch(() => undefined)))).filter((b) => b !== undefined);
      return pictures.length ? { pictures, video } : { gone: true, video };
    },
  };
}
export type PhotoShelf = ReturnType<typeof photoShelf>;

const NO_VISION = "I can't see images right now: no AI provider that reads images is configured. You can describe the picture in words instead.";

/**
 * Vision: photos, stickers and image documents (with a question as caption, or a photo quoted by a question) are
 * answered through the gateways' `POST /v1/messages` in chain order, with the same failover, cooldowns and
 * premium-request rule as chat. The answer joins the chat history as text, so follow-up questions work.
 */
export default definePlugin({
  name: 'vision',
  description: 'Looks at photos, stickers, image files and videos and answers questions about them',
  // Before the premium plugin (60): "use the premium model" quoting a photo is a question about that photo.
  order: 55,
  needs: ['vision'],
  missing: NO_VISION,
  // The plugin owns the `vision` capability: at start, whether a gateway (which carries /v1/messages) has a key;
  // at run time, each gateway's verified path (visionStatus).
  provides: [
    {
      name: 'vision',
      detect: (host) => {
        const gateways = host.ai.legs().filter((leg) => leg.kind === 'gateway').length;
        return gateways ? { ok: true, detail: `${gateways} gateway(s); not yet verified` } : { ok: false, detail: 'no gateway key (vision goes through a gateway)' };
      },
      missing: NO_VISION,
      fix: 'set a gateway key (API_KEY or PRIMARY_GATEWAY_API_KEY) in .env (npm run setup)',
    },
  ],
  options: visionOptions,
  stores: [KEPT_PHOTOS],
  setup(host) {
    host.capabilities.setLive('vision', () => visionStatus(host.ai));
    const shelf = photoShelf(host);
    return {
      predicates: [{ when: (ctx) => Boolean(findImage(ctx)), usage: '(photo or video + question)', help: 'send or quote a photo, an album or a video with a question and I describe or answer about it', run: async (ctx) => (await answering()).answerAboutImage(ctx, shelf) }],
      stop: shelf.stop,
    };
  },
});
