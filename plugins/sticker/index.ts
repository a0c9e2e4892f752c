import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { definePlugin, MediaTooLargeError } from '../../core/index.js';
import { JailRefused, MediaRefused } from '../../core/media.js';
import { ffmpegBinary } from '../../core/builtin.js';
import { makeSticker, StickerRefused } from './make-sticker.js';

/** Media larger than this is not downloaded for a sticker. */
const MAX_INPUT_BYTES = 16_000_000;
const KEEP_MS = 24 * 60 * 60 * 1000;

/**
 * `.sticker` on an image or a short video (as its caption, or replying to it): a WhatsApp sticker made by the jailed
 * ffmpeg — WebP, 512 px on the longer side, ≤ 100 KB still, ≤ 500 KB animated (the video's first 6 seconds).
 */
export default definePlugin({
  name: 'sticker',
  description: 'Makes WhatsApp stickers from images and short videos',
  needs: ['ffmpeg'],
  missing: 'I cannot make stickers here: ffmpeg is not available (the owner can install it).',
  setup: (host) => ({
    commands: [
      {
        command: 'sticker',
        help: 'make a sticker of an image or a short video (as its caption, or replying to it)',
        usage: '.sticker (on an image or video)',
        run: async (ctx) => {
          const media = ctx.message.media ?? ctx.message.quoted?.media;
          const prefix = ctx.host.config().prefix;
          if (!ctx.message.media && (await ctx.replyIfQuotedDeleted())) return;
          if (!media || (media.kind !== 'image' && media.kind !== 'video' && media.kind !== 'sticker')) {
            await ctx.reply(`Send ${prefix}sticker as the caption of an image or a short video, or reply with it to one.`);
            return;
          }
          if (media.size !== undefined && media.size > MAX_INPUT_BYTES) {
            await ctx.reply(`That file is too large for a sticker (${Math.round(media.size / 1_000_000)} MB; up to 16 MB).`);
            return;
          }
          let webp: Buffer;
          try {
            const bytes = await media.download({ maxBytes: MAX_INPUT_BYTES });
            if (bytes.length > MAX_INPUT_BYTES) throw new StickerRefused('That file is too large for a sticker (up to 16 MB).');
            ({ webp } = await makeSticker(host.jail, ffmpegBinary(host.settings).path, bytes, media.kind === 'video' ? 'video' : 'image'));
          } catch (err) {
            if (err instanceof MediaTooLargeError) return void (await ctx.reply(err.message));
            if (err instanceof StickerRefused || err instanceof MediaRefused || err instanceof JailRefused) {
              await ctx.reply(err instanceof StickerRefused ? err.message : `I could not make a sticker of that: ${err.message}`);
              return;
            }
            throw err;
          }
          const dir = host.files.folder('media/sticker');
          await mkdir(dir, { recursive: true });
          for (const name of await readdir(dir).catch(() => [] as string[])) {
            const info = await stat(path.join(dir, name)).catch(() => undefined);
            if (info && Date.now() - info.mtimeMs > KEEP_MS) await rm(path.join(dir, name), { force: true }).catch(() => undefined);
          }
          const file = path.join(dir, `${Date.now()}-${randomBytes(6).toString('hex')}.webp`);
          await writeFile(file, webp, { mode: 0o600 });
          await ctx.sendMedia({ kind: 'sticker', path: file, mimetype: 'image/webp' });
        },
      },
    ],
  }),
});
