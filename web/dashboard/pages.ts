import type { CapabilityStatus } from '../../core/operator.js';
import type { Problem } from '../../core/operator.js';
import type { LegHealth } from '../../core/operator.js';
import type { SessionState } from '../../core/operator.js';
import { html, raw, type SafeHtml } from '../html.js';
import { formatBytes } from '../format.js';
import { PAGE_CSS } from '../style.js';
import { pluginOptions, sectionFormSchema, shownSettings, type FieldProblem } from './config-form.js';
import { optionControls } from './option-form.js';
import { navHtml } from './nav.js';

/**
 * A whole page: doctype, the inline stylesheet (allowed by the CSP hash), title and body.
 * @example ctx.body = documentPage('Login', html`<p>hi</p>`).value
 */
export function documentPage(title: string, body: SafeHtml, head: SafeHtml = html``): SafeHtml {
  return html`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">${head}<title>${title}</title><style>${raw(PAGE_CSS)}</style></head><body>${body}</body></html>`;
}

/**
 * The login form. The token field is a password field posted in the body, never in the URL.
 * @example loginPage({ botName: 'Assistant', csrf, error: 'Wrong token.' })
 */
export function loginPage(view: { botName: string; csrf: string; error?: string; notice?: string }): SafeHtml {
  return documentPage(
    `${view.botName}: dashboard login`,
    html`<main class="login"><section><h1>${view.botName} dashboard</h1>
${view.notice ? html`<p class="notice ok" role="status">${view.notice}</p>` : ''}
${view.error ? html`<p class="notice error" role="alert" id="login-error">${view.error}</p>` : ''}
<form method="post" action="/config/login" autocomplete="off">
<input type="hidden" name="_csrf" value="${view.csrf}">
<label for="token">Access token</label>
<input type="password" id="token" name="token" required autocomplete="current-password" autofocus>
<p class="hint">The value of <code>CONFIG_TOKEN</code> in the bot's <code>.env</code>.</p>
<p><button type="submit">Log in</button></p>
</form></section></main>`,
  );
}

/**
 * A short page for refusals and errors (expired session, missing CSRF token, oversized form, ...).
 * @example messagePage('Session expired', 'Log in again.', '/config/login')
 */
export function messagePage(title: string, text: string, link?: { href: string; label: string }): SafeHtml {
  return documentPage(title, html`<main class="login"><section><h1>${title}</h1><p role="alert">${text}</p>${link ? html`<p><a href="${link.href}">${link.label}</a></p>` : ''}</section></main>`);
}

export interface PluginRow {
  name: string;
  description: string;
  /** Active / degraded / inactive, for people. */
  state: string;
  healthy: boolean;
  hasSchema: boolean;
  /** Whether the plugin is on when config.json does not mention it. */
  defaultEnabled: boolean;
  /** Set for a core plugin the owner cannot turn off: why (shown instead of the switch). */
  alwaysOn?: string;
}

/** A top-level section of config.json a plugin owns (`configSection`), edited with the general settings. */
export interface SectionRow {
  key: string;
  plugin: string;
  description: string;
  /** Edited as plain text (a string), else as a form built from `schema`. */
  text: boolean;
  schema: object;
  /** The value as shown in the field. */
  value: string;
  /** Why the value in the file is not used (the plugin runs on the default), from the load. */
  problems: string[];
}

export interface DashboardView {
  botName: string;
  csrf: string;
  /** Hash of config.json as shown, so a save over a newer file is refused (409). */
  version: string;
  config: Record<string, any>;
  optionTexts: Record<string, string>;
  problems: FieldProblem[];
  notice?: { kind: 'ok' | 'warn' | 'error'; text: string };
  session: SessionState;
  ownIds: Array<{ id: string; label: string; added: boolean }>;
  plugins: PluginRow[];
  sections: SectionRow[];
  capabilities: Array<{ name: string } & CapabilityStatus>;
  /** Settings that can run code or open a hole: environment only, shown here read-only. */
  envOnly: Array<{ plugin: string; name: string; description: string; value?: string }>;
  legs: LegHealth[];
  gateways: Array<{ name: string; url: string; healthy: boolean; detail: string }>;
  audio: { keys: number; status: CapabilityStatus };
  usage: { day: string; rows: Array<{ leg: string; model: string; requests: number; prompt: number; completion: number; total: number }>; totals: { main: number; premium: number }; quotas: { main: number; premium: number } };
  pluginFailures: Array<{ source: string; reason: string }>;
  recentProblems: Problem[];
  /** Data files set aside at load, files not saved, free space of DATA_DIR. */
  data?: { setAside: Array<{ file: string; movedTo: string; reason: string }>; unsaved: Array<{ file: string; reason: string }>; freeBytes?: number; low?: boolean };
  running: { host: string; port: number | undefined };
  now: number;
}

function sessionText(session: SessionState): SafeHtml {
  if (session.status === 'qr') return html`<b class="warn">QR pending</b>: open <a href="/">the QR page</a> and scan it with WhatsApp → Linked devices.`;
  if (session.status === 'linked') {
    const me = [session.me?.name, session.me?.id, session.me?.lid ? `LID ${session.me.lid}` : undefined].filter(Boolean).join(' · ');
    return html`<b class="ok">linked</b>${me ? html` as ${me}` : ''}`;
  }
  return html`<b class="${session.status === 'offline' ? 'bad' : 'warn'}">${session.status}</b>`;
}

function errorsFor(problems: FieldProblem[], field: string): SafeHtml {
  return html`${problems.filter((p) => p.field === field).map((p) => html`<p class="field-error" data-field="${field}">${p.message}</p>`)}`;
}

function invalid(problems: FieldProblem[], field: string): SafeHtml {
  return problems.some((p) => p.field === field) ? html` aria-invalid="true"` : html``;
}

function ids(value: unknown): string {
  return Array.isArray(value) ? value.map(String).join('\n') : '';
}

function textField(view: DashboardView, field: string, label: string, value: unknown, hint: string, type = 'text'): SafeHtml {
  const id = `f-${field.replace(/\./g, '-')}`;
  return html`<div><label for="${id}">${label}</label><input type="${type}" id="${id}" name="${field}" value="${value === undefined ? '' : String(value)}"${invalid(view.problems, field)}><p class="hint">${hint}</p>${errorsFor(view.problems, field)}</div>`;
}

function idsField(view: DashboardView, field: string, label: string, value: unknown, hint: string): SafeHtml {
  const id = `f-${field.replace(/\./g, '-')}`;
  return html`<div><label for="${id}">${label}</label><textarea id="${id}" name="${field}" rows="2"${invalid(view.problems, field)}>${ids(value)}</textarea><p class="hint">${hint}</p>${errorsFor(view.problems, field)}</div>`;
}

/** The access modes as the select offers them (config `access.mode`). */
const ACCESS_MODES: Array<[string, string]> = [
  ['everyone', 'everyone (minus the block list)'],
  ['pairing', 'pairing: a stranger gets a code an owner approves'],
  ['owners', 'owners only'],
  ['allowList', 'owners and the allow list'],
];

function generalFields(view: DashboardView): SafeHtml {
  const c = shownSettings(view.config);
  const own = view.ownIds.length
    ? html`<div class="own-ids"><span class="hint">The bot's own ids:</span>${view.ownIds.map((o) =>
        o.added
          ? html`<span><code>${o.id}</code> (${o.label}) <span class="ok">✔ in the list</span></span>`
          : html`<button type="submit" class="secondary" name="addOwnId" value="${o.id}" title="Add to targetUserIds and save">Add ${o.label} <code>${o.id}</code></button>`,
      )}</div>`
    : html`<p class="hint">The bot's own phone id and LID appear here once WhatsApp is linked.</p>`;
  const restart = c.port !== String(view.running.port) || c.host !== view.running.host;
  return html`<fieldset><legend>General</legend><div class="grid">
${textField(view, 'prefix', 'Command prefix', c.prefix, '1–3 characters, no spaces (e.g. "." for .ping).')}
${textField(view, 'botName', 'Bot name', c.botName, 'How the bot calls itself.')}
</div>
${idsField(view, 'targetUserIds', 'Bot ids that count as a mention (targetUserIds)', c.targetUserIds, 'Phone numbers or LIDs, digits only, one per line.')}
${own}
<div class="grid">
${textField(view, 'port', 'Web port', c.port, restart ? 'Changed: takes effect after a restart.' : 'Changing it needs a restart. 0 picks a free port.', 'text')}
${textField(view, 'host', 'Bind address (host)', c.host, '127.0.0.1 keeps the web server local. Changing it needs a restart.')}
</div>
${idsField(view, 'owners', 'Owners', c.owners, 'Ids of the people who run the bot (owner-only plugins, admin commands).')}
<div class="grid"><div><label for="f-access-mode">Who may talk to the bot privately</label><select id="f-access-mode" name="access.mode"${invalid(view.problems, 'access.mode')}>
${ACCESS_MODES.map(([mode, text]) => html`<option value="${mode}"${c.access.mode === mode ? html` selected` : ''}>${text}</option>`)}</select>${errorsFor(view.problems, 'access.mode')}</div>
<div><label for="f-groups">Groups</label><label class="hint"><input type="checkbox" id="f-groups" name="groups.commandsWithoutMention"${c.groups.commandsWithoutMention ? html` checked` : ''}> commands work in groups without mentioning the bot</label></div></div>
<div class="grid">${idsField(view, 'access.allow', 'Allow list', c.access.allow, 'Used when "only the allow list" is chosen.')}
${idsField(view, 'access.block', 'Block list', c.access.block, 'The bot ignores these ids.')}</div>
</fieldset>`;
}

/** config `whatsapp`: what the people who write see of the bot (both on unless the file says false). */
function whatsAppFields(view: DashboardView): SafeHtml {
  const wa = shownSettings(view.config).whatsapp;
  const box = (field: string, on: boolean, text: string) =>
    html`<label class="hint"><input type="checkbox" id="f-${field.replace(/\./g, '-')}" name="${field}"${on ? html` checked` : ''}> ${text}</label>${errorsFor(view.problems, field)}`;
  return html`<fieldset id="whatsapp"><legend>WhatsApp</legend><input type="hidden" name="whatsapp:present" value="1">
<div>${box('whatsapp.readReceipts', wa.readReceipts, 'read receipts: blue ticks on the messages the bot answers (never on blocked, held or ignored ones)')}</div>
<div>${box('whatsapp.presence', wa.presence, 'show the bot "online" while it types an answer (offline again after)')}</div></fieldset>`;
}

function sectionFields(view: DashboardView): SafeHtml {
  if (!view.sections.length) return html``;
  const rows = view.sections.map((s) => {
    const field = `section.${s.key}`;
    const id = `f-section-${s.key}`;
    if (!s.text) {
      // Anything but plain text is a form built from the section's schema, like a plugin's options.
      const value = view.config[s.key];
      return html`<div class="section" data-section="${s.key}"><input type="hidden" name="section:${s.key}:present" value="1">${optionControls('section', sectionFormSchema(s), value === undefined ? {} : { [s.key]: value })}<p class="hint">(plugin ${s.plugin}; a field left empty: the default)</p>${errorsFor(view.problems, field)}</div>`;
    }
    const control = html`<input type="text" id="${id}" name="section:${s.key}" value="${s.value}"${invalid(view.problems, field)}>`;
    const loaded = !view.problems.some((p) => p.field === field) && s.problems.length
      ? html`${s.problems.map((p) => html`<p class="field-error" data-field="${field}">In config.json now: ${p}; ${s.plugin} uses the default until it is fixed.</p>`)}`
      : html``;
    return html`<div class="section" data-section="${s.key}"><input type="hidden" name="section:${s.key}:present" value="1"><label for="${id}">${s.key}</label>${control}<p class="hint">${s.description ? `${s.description} ` : ''}(plugin ${s.plugin}; empty: the default)</p>${errorsFor(view.problems, field)}${loaded}</div>`;
  });
  return html`<fieldset id="sections"><legend>Plugin settings at the top of config.json</legend>${rows}</fieldset>`;
}

function pluginRows(view: DashboardView): SafeHtml {
  const rows = view.plugins.map((p) => {
    const section = (view.config.plugins?.[p.name] ?? {}) as Record<string, unknown>;
    const enabled = section.enabled ?? p.defaultEnabled;
    const access = section.access ?? 'everyone';
    const choice = Array.isArray(access) ? 'list' : access === 'owners' ? 'owners' : 'everyone';
    const set = Object.keys(pluginOptions(section)).length;
    const key = `plugins.${p.name}`;
    return html`<tr class="plugin" data-plugin="${p.name}"><td><input type="hidden" name="plugin:${p.name}:present" value="1"><b>${p.name}</b><p class="hint">${p.description}</p><p class="${p.healthy ? 'ok' : 'warn'}">${p.state}</p></td>
<td>${p.alwaysOn ? html`<input type="hidden" name="plugin:${p.name}:enabled" value="on"><p class="hint">always on: ${p.alwaysOn}</p>` : html`<label class="hint"><input type="checkbox" name="plugin:${p.name}:enabled"${enabled ? html` checked` : ''}> enabled</label>`}${errorsFor(view.problems, `${key}.enabled`)}</td>
<td><select name="plugin:${p.name}:access" aria-label="who may use ${p.name}"${invalid(view.problems, `${key}.access`)}>
<option value="everyone"${choice === 'everyone' ? html` selected` : ''}>everyone</option>
<option value="owners"${choice === 'owners' ? html` selected` : ''}>owners only</option>
<option value="list"${choice === 'list' ? html` selected` : ''}>these ids:</option></select>
<textarea name="plugin:${p.name}:ids" rows="2" aria-label="ids that may use ${p.name}, one per line" placeholder="ids for &quot;these ids&quot;, one per line">${Array.isArray(access) ? access.join('\n') : ''}</textarea>${errorsFor(view.problems, `${key}.access`)}</td>
<td>${p.hasSchema ? html`<a href="/config/plugins#plugin-${p.name}">${set ? `${set} set` : 'all default'}: change in Plugins</a>` : html`<span class="hint">none</span>`}${errorsFor(view.problems, `${key}.options`)}</td></tr>`;
  });
  return html`<fieldset><legend>Plugins</legend><table><thead><tr><th>Plugin</th><th>On</th><th>Who may use it</th><th>Options</th></tr></thead><tbody>${rows}</tbody></table></fieldset>`;
}

/** Read-only facts that belong with the settings: what only `.env` can set, and plugins that did not load. */
function readOnlySections(view: DashboardView): SafeHtml {
  if (!view.envOnly.length && !view.pluginFailures.length) return dataSection(view);
  return html`${dataSection(view)}<section id="read-only">${view.envOnly.length ? html`<h2>Set in .env only (read-only here)</h2><p>These can run a program or open a hole, so they are never set from this page: edit <code>.env</code> and restart.</p><table><thead><tr><th>Setting</th><th>Value</th><th>Meaning</th></tr></thead><tbody>${view.envOnly.map((e) => html`<tr><td><b>${e.name}</b></td><td>${e.value === undefined ? html`<i>not set</i>` : html`<code>${e.value}</code>`}</td><td>${e.plugin}: ${e.description}</td></tr>`)}</tbody></table>` : ''}
${view.pluginFailures.length ? html`<h2>Plugins that did not load</h2><ul>${view.pluginFailures.map((f) => html`<li class="bad"><b>${f.source}</b>: ${f.reason}</li>`)}</ul>` : ''}</section>`;
}

/**
 * The dashboard: session state, the config form (general settings and per-plugin controls, field errors inline)
 * and the read-only health of the service.
 *
 * @example ctx.body = dashboardPage(view).value
 */
/** Data folder health and the owners' privacy form (export or delete what the bot keeps about one person). */
function dataSection(view: DashboardView): SafeHtml {
  const data = view.data;
  if (!data) return html``;
  const free = data.freeBytes === undefined ? 'unknown' : formatBytes(data.freeBytes);
  return html`<section id="data"><h2>Data folder</h2><p id="free-space" class="${data.low ? 'bad' : 'ok'}">Free space: <b>${free}</b></p>
${data.setAside.length ? html`<h3>Data files set aside (bytes kept)</h3><ul id="set-aside">${data.setAside.map((p) => html`<li class="warn"><b>${p.file}</b>: ${p.reason} → kept as ${p.movedTo}</li>`)}</ul>` : ''}
${data.unsaved.length ? html`<h3>Not saved (kept in memory, retried)</h3><ul id="unsaved">${data.unsaved.map((p) => html`<li class="bad"><b>${p.file}</b>: ${p.reason}</li>`)}</ul>` : ''}
<h3>A person's data</h3><form method="post" action="/config/mydata" id="mydata-form"><input type="hidden" name="_csrf" value="${view.csrf}">
<label for="mydata-person">Phone number or LID (digits)</label><input id="mydata-person" name="person" inputmode="numeric">
<label for="mydata-confirm">To delete, type the digits again</label><input id="mydata-confirm" name="confirm" inputmode="numeric">
<button type="submit" name="action" value="export">Download everything kept</button> <button type="submit" name="action" value="delete" class="secondary">Delete everything kept</button></form></section>`;
}

export function dashboardPage(view: DashboardView): SafeHtml {
  const summary = view.problems.length
    ? html`<div class="notice error" role="alert" id="form-errors"><b>Not saved.</b> Fix these fields; config.json was not changed:<ul>${view.problems.map((p) => html`<li>${p.message}</li>`)}</ul></div>`
    : '';
  return documentPage(
    `${view.botName}: dashboard`,
    html`<a class="skip" href="#content">Skip to content</a><header><h1>${view.botName} · dashboard</h1>${navHtml('settings')}<form method="post" action="/config/logout"><input type="hidden" name="_csrf" value="${view.csrf}"><button type="submit" class="secondary" id="logout">Log out</button></form></header>
<main id="content"><h2 class="view-title">Settings</h2>
${view.notice ? html`<div class="notice ${view.notice.kind}" role="status" id="notice">${view.notice.text}</div>` : ''}
${summary}
<section id="session"><h2>WhatsApp session</h2><p>${sessionText(view.session)} · <a href="/config/status">status</a>, <a href="/config/providers">providers</a>, <a href="/config/usage">usage</a> and <a href="/config/log">log</a> have their own views.</p></section>
<form method="post" action="/config/save" id="config-form">
<input type="hidden" name="_csrf" value="${view.csrf}"><input type="hidden" name="version" value="${view.version}">
<p><button type="submit" id="save-top">Save and apply</button></p>
${generalFields(view)}
${whatsAppFields(view)}
${sectionFields(view)}
${pluginRows(view)}
<p><button type="submit" id="save">Save and apply</button> <span class="hint">Validated like at start-up, written atomically; the previous file is kept as config.json.bak.</span></p>
</form>
${readOnlySections(view)}
</main>`,
  );
}
