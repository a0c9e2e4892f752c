import { inIdList, userPart, type MessageContext } from '../../../index.js';
import { money } from './prices.js';
import type { Answer } from './stores.js';

const squash = (text: string) => text.replace(/\s+/g, ' ').trim();

/**
 * The record a `.why` asks about: the bot's message it replies to (found by its words: a long answer went as several
 * messages), or else the chat's latest answer. Undefined when none is kept.
 */
export function answerAskedAbout(ctx: MessageContext, items: readonly Answer[]): Answer | undefined {
  const quoted = ctx.message.quoted;
  if (quoted?.fromBot) {
    const words = squash(quoted.text).slice(0, 80);
    if (!words) return undefined;
    for (let i = items.length - 1; i >= 0; i--) if (squash(items[i].answer).includes(words)) return items[i];
    return undefined;
  }
  return items.at(-1);
}

/**
 * `.why` in words, redacted for who asks where: the tools by name and outcome only; a remembered fact's words only
 * when the asker set it (or an owner asks in a private chat), other people's counted, never shown; the summary's
 * use without its words; never a key (the record holds none).
 */
export function whyText(answer: Answer, ctx: MessageContext, currency: string): string {
  const asker = [ctx.senderId, ctx.message.senderAltId].filter((id): id is string => Boolean(id));
  const seesAllFacts = ctx.isOwner && !ctx.message.isGroup;
  const when = new Date(answer.at).toISOString().slice(0, 16).replace('T', ' ');
  const lines = [`Why I answered that way (${when} UTC):`];
  lines.push(`• Answered by: leg ${answer.leg}, model ${answer.model}${answer.premium ? ' (premium, asked for)' : ''}`);
  lines.push(answer.failedLegs.length ? `• Failover: yes — ${answer.failedLegs.join(', ')} could not answer, so ${answer.leg} did (it would have been ${answer.intendedLeg} with ${answer.intendedModel})` : '• Failover: no');
  if (answer.profileModelMissing) lines.push(`• This chat's profile asks for ${answer.profileModelMissing}; leg ${answer.leg} does not offer it, so it used its own model (${answer.model})`);
  lines.push(answer.tools.length ? `• Tools: ${answer.tools.map((t) => `${t.name} (${t.outcome})`).join(', ')}` : '• Tools: none');
  const shown = answer.facts.filter((f) => seesAllFacts || (f.by !== undefined && inIdList(f.by, asker)));
  const hidden = answer.facts.length - shown.length;
  if (!answer.facts.length) lines.push('• Remembered facts used: none');
  else {
    const listed = shown.map((f) => `"${f.text}"${f.by && !inIdList(f.by, asker) ? ` (asked by ${userPart(f.by) || f.by})` : ''}`);
    if (hidden) listed.push(`${hidden} that ${hidden === 1 ? 'was' : 'were'} not yours (not shown)`);
    lines.push(`• Remembered facts used: ${listed.join('; ')}`);
  }
  lines.push(answer.summaryPeople ? "• The chat's summary of older conversation: used" : "• The chat's summary of older conversation: not used");
  const { prompt, cached, completion } = answer.tokens;
  lines.push(`• Tokens: ${prompt} in (${cached} of them cached), ${completion} out`);
  lines.push(answer.cost === undefined ? `• Cost: unknown — no price for ${(answer.unpricedModels ?? [answer.model]).join(', ')} (the owner can add it under money.prices in config.json)` : `• Cost: ${money(answer.cost, currency)}`);
  lines.push(`• Time: ${(answer.ms / 1000).toFixed(1)} s`);
  return lines.join('\n');
}
