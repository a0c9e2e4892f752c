import type { Context } from 'koa';
import type { OperatorPort } from '../../core/operator.js';
import type { Transport } from '../../core/operator.js';
import type { SafeHtml } from '../html.js';
import type { DashboardSession } from './auth.js';

/** What the dashboard's view routes (status, providers, usage, plugins, log, access) need from the dashboard. */
export interface ViewRouteDeps {
  app: OperatorPort;
  transport: () => Transport | undefined;
  currentSession(ctx: Context): DashboardSession | undefined;
  /**
   * Calls `onEnd` when the request's session ends (logout, expiry); returns the function that stops watching, or
   * undefined when there is no live session.
   */
  watchSession(ctx: Context, onEnd: () => void): (() => void) | undefined;
  authorisedForm(ctx: Context): Promise<{ session: DashboardSession; form: URLSearchParams } | undefined>;
  send(ctx: Context, status: number, page: SafeHtml): void;
  readConfig(): Promise<Record<string, any>>;
}
