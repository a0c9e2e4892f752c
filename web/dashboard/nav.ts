import { html, type SafeHtml } from '../html.js';

/** The dashboard's views, in the order of the navigation. `settings` is the config form at `/config`. */
export const VIEWS = [
  { id: 'status', href: '/config/status', label: 'Status' },
  { id: 'providers', href: '/config/providers', label: 'Providers' },
  { id: 'usage', href: '/config/usage', label: 'Usage' },
  { id: 'plugins', href: '/config/plugins', label: 'Plugins' },
  { id: 'access', href: '/config/access', label: 'Access' },
  { id: 'api', href: '/config/api', label: 'API tokens' },
  { id: 'settings', href: '/config', label: 'Settings' },
  { id: 'log', href: '/config/log', label: 'Log' },
] as const;
export type ViewId = (typeof VIEWS)[number]['id'];

/** The dashboard's own script: live regions and the log tail. Loaded from this server (CSP `script-src 'self'`). */
export const SCRIPT_PATH = '/config/assets/dashboard.js';

/** The navigation between the views, the current one marked for screen readers. */
export function navHtml(active: ViewId): SafeHtml {
  return html`<nav aria-label="Dashboard views"><ul>${VIEWS.map((v) => html`<li><a href="${v.href}"${v.id === active ? html` aria-current="page"` : ''}>${v.label}</a></li>`)}</ul></nav>`;
}
