import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { AllProvidersFailedError, definePlugin, defineTool, Store, Type, UpstreamFailure, type MessageContext, type PluginHost, type ProviderLeg } from '../../core/index.js';
import { DownloadRefused, isPrivateAddress, type EgressPolicy } from '../../core/media.js';
import { BadImageAnswer, generateOnLeg, NoImageEndpoint } from './gateway-images.js';

const options = Type.Object({
  dailyImagesPerUser: Type.Integer({ title: 'Pictures per person a day', minimum: 0, maximum: 1000, default: 10, description: 'pictures one person may have drawn a day (0: no limit; owners are exempt)' }),
  size: Type.Union([Type.Literal('1024x1024'), Type.Literal('1024x1536'), Type.Literal('1536x1024'), Type.Literal('512x512'), Type.Literal('256x256')], {
    title: 'Picture size',
    default: '1024x1024',
    description: 'size asked of the image model',
  }),
});
type ImagineOptions = { dailyImagesPerUser: number; size: string };

export const MAX_PROMPT_CHARS = 1000;
const MAX_IMAGE_BYTES = 10_000_000;
/** Pictures stay on disk a day after they were sent (long enough for a slow send), then go. */
const KEEP_MS = 24 * 60 * 60 * 1000;

export const NO_IMAGE_MODEL = 'I cannot draw pictures: no image model is configured (the owner sets IMAGE_MODEL in .env).';
export const GATEWAY_HAS_NONE = 'I cannot draw pictures: this gateway has no image model.';

/** Pictures drawn today per person: the daily cap and the usage count. */
const DRAWN = Store.doc('drawn', Type.Object({ day: Type.String(), byUser: Type.Record(Type.String(), Type.Integer({ minimum: 0 })) }), () => ({ day: '', byUser: {} }), {
  people: { byId: (d) => d.byUser },
});

const today = () => new Date().toISOString().slice(0, 10);

/** Test hooks: exact `address:port` destinations a returned URL may reach although private (one loopback fake). */
export interface ImagineTestHooks {
  allowForTests?: string[];
}
export const testHooks: ImagineTestHooks = {};

type Host = PluginHost<ImagineOptions>;
type Outcome = { ok: true; file: string; mimetype: string } | { ok: false; text: string };

/**
 * Draws pictures with the gateway's image model: `.imagine <prompt>` and the `generate_image` tool. The plugin owns
 * the `imageGen` capability (IMAGE_MODEL set and a gateway configured); a gateway that answers the images endpoint
 * with 404/405/501 is said once to have no image model and the capability goes down until restart.
 */
function imagine(host: Host) {
  /** Gateway legs known to lack the images endpoint. */
  const lacking = new Set<string>();
  const gatewayLegs = () => host.ai.legs().filter((leg) => leg.kind === 'gateway');
  const allLacking = () => gatewayLegs().length > 0 && gatewayLegs().every((leg) => lacking.has(leg.name));

  const markDown = () => {
    host.capabilities.setLive('imageGen', () => ({ ok: false, detail: 'the gateway has no image model (its images endpoint answered 404/405/501)' }), () => false);
    // Reached once: later requests stop at allLacking() before asking the gateway again.
    host.log.warn('the gateway has no image endpoint: picture drawing is off until restart');
  };

  const egress = (): EgressPolicy => ({ isBlocked: isPrivateAddress, allowForTests: testHooks.allowForTests });

  /** Counts one picture for the sender today; the sentence to say when over the cap. */
  async function takeQuota(senderId: string, isOwner: boolean): Promise<string | undefined> {
    const cap = host.options().dailyImagesPerUser;
    const doc = host.store.doc(DRAWN);
    const now = await doc.get();
    const used = now.day === today() ? (now.byUser[senderId] ?? 0) : 0;
    if (!isOwner && cap > 0 && used >= cap) return `You have had your ${cap} pictures for today. Try again tomorrow.`;
    await doc.save((d) => {
      if (d.day !== today()) return { day: today(), byUser: { [senderId]: 1 } };
      d.byUser[senderId] = (d.byUser[senderId] ?? 0) + 1;
    });
    return undefined;
  }

  async function giveBack(senderId: string): Promise<void> {
    await host.store.doc(DRAWN).update((d) => {
      if (d.day === today() && d.byUser[senderId]) d.byUser[senderId] -= 1;
    });
  }

  async function sweep(dir: string): Promise<void> {
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      const file = path.join(dir, name);
      const info = await stat(file).catch(() => undefined);
      if (info && Date.now() - info.mtimeMs > KEEP_MS) await rm(file, { force: true }).catch(() => undefined);
    }
  }

  /** Draws one picture for the sender of `ctx`; a file to send, or the sentence to say. */
  async function draw(rawPrompt: string, ctx: MessageContext<unknown>): Promise<Outcome> {
    const { senderId, isOwner } = ctx;
    const model = host.setting('IMAGE_MODEL')?.trim();
    if (!model) return { ok: false, text: NO_IMAGE_MODEL };
    if (allLacking()) return { ok: false, text: GATEWAY_HAS_NONE };
    const prompt = rawPrompt.replace(/\s+/g, ' ').trim();
    if (!prompt) return { ok: false, text: `Tell me what to draw, for example: ${host.config().prefix}imagine a red fox in the snow, watercolour` };
    if (prompt.length > MAX_PROMPT_CHARS) return { ok: false, text: `That description is too long (${prompt.length} characters; the limit is ${MAX_PROMPT_CHARS}).` };
    // A paid picture is an AI request like a chat answer: a sender past their AI budget gets none (owners are exempt).
    const overBudget = await ctx.ai.budget(ctx);
    if (overBudget) return { ok: false, text: overBudget };
    const over = await takeQuota(senderId, isOwner);
    if (over) return { ok: false, text: over };
    let result: { bytes: Buffer; mimetype: string; ext: string } | { refused: string };
    try {
      result = await host.ai.failover(
        'image',
        async (leg: ProviderLeg) => {
          try {
            const picture = await generateOnLeg(leg, { model, prompt, size: host.options().size, timeoutMs: Math.max(host.settings.upstreamTimeoutMs, 60_000), maxBytes: MAX_IMAGE_BYTES, egress: egress() });
            host.ai.recordUsage(leg.name, model, false, undefined, senderId);
            return picture;
          } catch (err) {
            if (err instanceof NoImageEndpoint) {
              lacking.add(leg.name);
              throw new UpstreamFailure('http', { status: err.status, message: err.message });
            }
            // The gateway did answer: its picture is unusable, which another leg would not change.
            if (err instanceof BadImageAnswer || err instanceof DownloadRefused) return { refused: err.message };
            throw err;
          }
        },
        (leg) => leg.kind === 'gateway' && !lacking.has(leg.name),
        senderId,
      );
    } catch (err) {
      await giveBack(senderId);
      if (!(err instanceof AllProvidersFailedError)) throw err;
      if (allLacking()) {
        markDown();
        return { ok: false, text: GATEWAY_HAS_NONE };
      }
      host.log.warn({ causes: err.causes }, 'image generation failed on every gateway');
      return { ok: false, text: 'I could not draw that right now (the image service did not answer). Please try again later.' };
    }
    if ('refused' in result) {
      await giveBack(senderId);
      host.log.warn({ reason: result.refused }, 'image answer refused');
      return { ok: false, text: 'The image service sent back something I cannot use as a picture. Please try again.' };
    }
    const dir = host.files.folder('media/imagine');
    await mkdir(dir, { recursive: true });
    await sweep(dir);
    const file = path.join(dir, `${Date.now()}-${randomBytes(6).toString('hex')}.${result.ext}`);
    await writeFile(file, result.bytes, { mode: 0o600 });
    host.log.info({ model, bytes: result.bytes.length }, 'picture drawn');
    return { ok: true, file, mimetype: result.mimetype };
  }

  return { draw };
}

export default definePlugin({
  name: 'imagine',
  description: 'Draws pictures from a description with the gateway image model',
  options,
  stores: [DRAWN],
  // No plugin-wide needs (its other parts stay on): `.imagine` and the tool need imageGen, so neither is offered while it
  // is down, and `.imagine` says which of the two reasons holds (no IMAGE_MODEL, or a gateway without an image model).
  provides: [
    {
      name: 'imageGen',
      detect: (host: PluginHost<unknown>) => {
        const model = host.setting('IMAGE_MODEL')?.trim();
        if (!model) return { ok: false, notConfigured: true, detail: 'no IMAGE_MODEL: the bot cannot draw pictures' };
        if (!host.ai.legs().some((leg) => leg.kind === 'gateway')) return { ok: false, detail: `IMAGE_MODEL ${model} set, but no gateway is configured` };
        return { ok: true, detail: `image model ${model}` };
      },
      missing: NO_IMAGE_MODEL,
      fix: "set IMAGE_MODEL in .env (the gateway's image model)",
    },
  ],
  settings: [{ name: 'IMAGE_MODEL', description: "the gateway's image model for /v1/images/generations (empty: no picture drawing)" }],
  setup: (host) => {
    const { draw } = imagine(host);
    return {
      commands: [
        {
          command: 'imagine',
          help: 'draw a picture from a description',
          usage: '.imagine <description>',
          // Without an image model `.help` lists it under "Off here", and it says which reason holds.
          needs: ['imageGen'],
          missing: () => (host.setting('IMAGE_MODEL')?.trim() ? GATEWAY_HAS_NONE : NO_IMAGE_MODEL),
          run: async (ctx) => {
            await ctx.typing(true).catch(() => undefined);
            let outcome: Outcome;
            try {
              outcome = await draw(ctx.args, ctx);
            } finally {
              await ctx.typing(false).catch(() => undefined);
            }
            if (!outcome.ok) await ctx.reply(outcome.text);
            else await ctx.sendMedia({ kind: 'image', path: outcome.file, mimetype: outcome.mimetype });
          },
        },
      ],
      tools: [
        defineTool({
          name: 'generate_image',
          // It sends a picture into the calling chat; its answer is the bot's own words, no outside text.
          effects: { outsideText: false, acts: 'chats' },
          description: 'Draw a picture from a description and send it to this chat. Use only when the user asks for a picture, drawing or image to be made.',
          parameters: Type.Object({ prompt: Type.String({ description: 'what the picture shows, in detail (style, subject, setting)' }) }),
          needs: ['imageGen'],
          async run(args, call) {
            const outcome = await draw(args.prompt, call.ctx);
            if (!outcome.ok) return `The picture was not made: ${outcome.text} Tell the user this in your own words.`;
            // The core bound call.ctx to the asking chat: the picture can only go where it was asked for.
            await call.ctx.sendMedia({ kind: 'image', path: outcome.file, mimetype: outcome.mimetype });
            return 'The picture was sent to the chat. Say one short sentence about it; do not describe a link or file.';
          },
        }),
      ],
    };
  },
});
