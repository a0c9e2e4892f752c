import { Type } from '#typebox';
import type { AiConfig } from '../config/schema.js';
import { PluginStores } from '../store/plugin-store.js';
import { BUDGETS_SCHEMA } from '../store/schemas.js';
import type { SqlDoc } from '../store/sql-docs.js';
import { Store } from '../store/store-declarations.js';
import { today } from './usage.js';

interface BudgetDoc {
  day: string;
  tokens: Record<string, number>;
  premiumTokens: Record<string, number>;
  /** user → request times (ms) within the last minute */
  recent: Record<string, number[]>;
  /** user → tool calls run today (each may be a paid search or act in a chat) */
  toolCalls?: Record<string, number>;
}

/**
 * The budget counters as the core declares them (`core` namespace of the store database). Earlier versions kept them
 * in `data/budgets.json`: taken in once at the first start, then kept aside under `data/migrated/`.
 */
export const BUDGETS_STORE = Store.doc('budgets', Type.Unsafe<BudgetDoc>(BUDGETS_SCHEMA.schema), (): BudgetDoc => ({ day: today(), tokens: {}, premiumTokens: {}, recent: {} }), {
  path: 'budgets.json',
  title: BUDGETS_SCHEMA.name,
});

/** Says whether a user may make another AI request, and if not, a plain sentence saying when they can. */
export type BudgetVerdict = { ok: true } | { ok: false; reason: string };

/**
 * Per-user AI budgets so one heavy user cannot burn the account's quota: requests per minute, tokens per day, and a
 * smaller premium token budget. Owners are exempt. Kept in the store database (`BUDGETS_STORE`), so counters survive a
 * restart.
 *
 * @example
 * const verdict = budgets.check(senderId, false, config.ai);
 * if (!verdict.ok) return ctx.reply(verdict.reason);
 */
export class UserBudgets {
  private readonly doc: SqlDoc<BudgetDoc>;
  /** @param flushMs counters are written at most once per this interval (and at stop), never per message. */
  constructor(dataDir: string, private readonly now: () => number = Date.now, flushMs = 1000) {
    this.doc = new PluginStores('core', dataDir, [BUDGETS_STORE], undefined, flushMs).document(BUDGETS_STORE);
  }

  async load(): Promise<void> {
    await this.doc.get();
  }

  private async current(): Promise<BudgetDoc> {
    const doc = await this.doc.get();
    if (doc.day !== today(this.now())) {
      await this.doc.update((d) => {
        d.day = today(this.now());
        d.tokens = {};
        d.premiumTokens = {};
        d.toolCalls = {};
      });
    }
    doc.recent ??= {};
    return doc;
  }

  /** Today's tokens per user (main and premium), for the dashboard's usage view. */
  async todayByUser(): Promise<Array<{ userId: string; tokens: number; premiumTokens: number }>> {
    const doc = await this.current();
    const users = new Set([...Object.keys(doc.tokens ?? {}), ...Object.keys(doc.premiumTokens ?? {})]);
    return [...users].map((userId) => ({ userId, tokens: doc.tokens?.[userId] ?? 0, premiumTokens: doc.premiumTokens?.[userId] ?? 0 })).sort((a, b) => b.tokens - a.tokens);
  }

  async check(userId: string, premium: boolean, limits: AiConfig): Promise<BudgetVerdict> {
    const doc = await this.current();
    const now = this.now();
    const times = (doc.recent[userId] ?? []).filter((t) => now - t < 60_000);
    if (limits.requestsPerMinute > 0 && times.length >= limits.requestsPerMinute) {
      const wait = Math.ceil((60_000 - (now - times[0])) / 1000);
      return { ok: false, reason: `You have sent a lot of requests in a short time. Please try again in ${wait} seconds.` };
    }
    // Only a refusal needs it (parsing the day costs on every message otherwise).
    const hours = () => Math.max(1, Math.ceil((new Date(`${doc.day}T00:00:00Z`).getTime() + 86_400_000 - now) / 3_600_000));
    if (premium && limits.premiumTokensPerDay > 0 && (doc.premiumTokens[userId] ?? 0) >= limits.premiumTokensPerDay) {
      return { ok: false, reason: `You have used today's budget for the premium model. You can ask again in about ${hours()} hour(s) (after midnight UTC); the normal model is still available.` };
    }
    if (limits.tokensPerDay > 0 && (doc.tokens[userId] ?? 0) >= limits.tokensPerDay) {
      return { ok: false, reason: `You have used today's AI budget. You can ask again in about ${hours()} hour(s) (after midnight UTC).` };
    }
    // Only a per-minute limit needs request times, and only the last `requestsPerMinute` of them.
    if (limits.requestsPerMinute > 0) {
      await this.doc.update((d) => {
        d.recent[userId] = [...times, now].slice(-limits.requestsPerMinute);
        for (const [user, list] of Object.entries(d.recent)) if (!list.some((t) => now - t < 60_000)) delete d.recent[user];
      });
    }
    return { ok: true };
  }

  async spend(userId: string, premium: boolean, tokens: number): Promise<void> {
    await this.current();
    await this.doc.update((d) => {
      const bucket = premium ? d.premiumTokens : d.tokens;
      bucket[userId] = (bucket[userId] ?? 0) + tokens;
      if (premium) d.tokens[userId] = (d.tokens[userId] ?? 0) + tokens;
    });
  }

  /**
   * Takes one tool call from the user's daily allowance (`limit` 0 = no limit). Says false, taking nothing, when
   * today's calls are used: the call is then refused in its result, so the model still answers.
   */
  async takeToolCall(userId: string, limit: number): Promise<boolean> {
    const doc = await this.current();
    if (limit > 0 && (doc.toolCalls?.[userId] ?? 0) >= limit) return false;
    await this.doc.update((d) => {
      d.toolCalls ??= {};
      d.toolCalls[userId] = (d.toolCalls[userId] ?? 0) + 1;
    });
    return true;
  }

  /** Tool calls the user ran today. */
  async toolCallsToday(userId: string): Promise<number> {
    return (await this.current()).toolCalls?.[userId] ?? 0;
  }

  flush(): Promise<void> {
    return this.doc.flush();
  }
}
