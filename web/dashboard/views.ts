import { capabilityMark, capabilityWord, type CapabilityStatus } from '../../core/operator.js';
import type { TailLine } from '../../core/operator.js';
import type { LegHealth, LegStartCheck } from '../../core/operator.js';
import type { IncidentView } from '../../core/operator.js';
import { humanDuration, legStateInWords, startCheckInWords } from '../../core/operator.js';
import type { SessionState } from '../../core/operator.js';
import type { PanelTable } from '../../core/operator.js';
import { html, raw, type SafeHtml } from '../html.js';
import { formatBytes, formatTime, pairingCodeHtml, timeTag } from '../format.js';
import { documentPage } from './pages.js';
import { controlPaths, optionControls } from './option-form.js';
import { navHtml, SCRIPT_PATH, type ViewId } from './nav.js';

export { SCRIPT_PATH, VIEWS, type ViewId } from './nav.js';

export interface Notice {
  kind: 'ok' | 'warn' | 'error';
  text: string;
}

/**
 * The frame of every dashboard view: header with the navigation and log-out, the notice, the view's content.
 * `live` names the regions the script keeps current over server-sent events.
 */
export function shell(parts: { botName: string; csrf: string; active: ViewId; title: string; body: SafeHtml; notice?: Notice; live?: boolean }): SafeHtml {
  return documentPage(
    `${parts.botName}: ${parts.title}`,
    html`<a class="skip" href="#content">Skip to content</a><header><h1>${parts.botName} · dashboard</h1>${navHtml(parts.active)}<form method="post" action="/config/logout"><input type="hidden" name="_csrf" value="${parts.csrf}"><button type="submit" class="secondary" id="logout">Log out</button></form></header>
<main id="content"${parts.live ? html` data-live="${parts.active}"` : ''}><h2 class="view-title">${parts.title}</h2>
${parts.notice ? html`<div class="notice ${parts.notice.kind}" role="status" id="notice">${parts.notice.text}</div>` : ''}
${parts.body}</main>`,
    html`<script src="${SCRIPT_PATH}" defer></script>`,
  );
}

const number = (n: number) => n.toLocaleString('en-US');
const stateClass = (state: LegHealth['state']) => (state === 'healthy' ? 'ok' : state === 'cooling-down' ? 'warn' : 'bad');
const capClass = (c: CapabilityStatus) => (!c.ok ? (c.notConfigured ? 'off' : 'bad') : c.degraded ? 'warn' : 'ok');
const checkState = (c: LegStartCheck) => (!c.ok ? 'failed' : c.degraded ? 'degraded' : 'ok');
const checkClass = (c: LegStartCheck) => (!c.ok ? 'bad' : c.degraded ? 'warn' : 'ok');

/** What the start check found for one upstream, with the setting to fix when it failed (never a key). */
function startCheckHtml(check: LegStartCheck): SafeHtml {
  return html`<span data-start-check="${checkState(check)}" class="${checkClass(check)}">${startCheckInWords(check)}</span>`;
}

// ---------- status ----------

export interface StatusViewData {
  session: SessionState;
  /** The last warnings and errors of the log (redacted), newest first. */
  problems: Array<{ time: number; level: string; msg: string; plugin?: string }>;
  qrSvg?: string;
  uptimeMs: number;
  version: string;
  freeDisk?: { bytes: number; dir: string };
  canRelink: boolean;
  /** A session is stored (linked now, or linked before and reconnecting): only then is there something to relink. */
  sessionStored: boolean;
  /** The transport can link with a phone number (pairing code) instead of the QR. */
  canPair: boolean;
  /** Incidents the owners are told of (active first): the link's own ones can reach them only here while it is down. */
  incidents: IncidentView[];
  /** The provider legs as the chain sees them now, each with its start check. */
  legs: LegHealth[];
  /** The search key's start check, when a search key is set and it has run. */
  searchCheck?: LegStartCheck;
  csrf: string;
}

/**
 * Active incidents and those over since start; a link incident says its chat notice waits for the link. While
 * WhatsApp is not connected, an empty list is not shown as a calm "none": the link itself is the open problem.
 */
export function incidentsSection(incidents: IncidentView[], linked = true): SafeHtml {
  const item = (i: IncidentView) =>
    html`<li data-incident="${i.key}">${timeTag(i.since)} ${
      i.active ? html`<b class="bad">active</b>` : html`<span class="ok">over</span>${i.recoveredAt ? html` <span class="hint">(${formatTime(i.recoveredAt)})</span>` : ''}`
    } ${i.text}${i.active && i.linkDown ? html` <span class="hint">The owners get this in WhatsApp, marked late, once the link is back.</span>` : ''}</li>`;
  return html`<section id="incidents" aria-labelledby="h-incidents"><h3 id="h-incidents">Incidents</h3>${
    incidents.length
      ? html`<ul class="plain log">${incidents.slice(0, 10).map(item)}</ul>`
      : linked
        ? html`<p class="ok">None since start.</p>`
        : html`<p class="warn">WhatsApp is not connected (see WhatsApp above); no other incident since start.</p>`
  }</section>`;
}

/** The live part of the status view: link state with reason and next retry, QR or pairing code, own ids. */
export function linkRegion(d: Pick<StatusViewData, 'session' | 'qrSvg'>): SafeHtml {
  const s = d.session;
  const state =
    s.status === 'linked'
      ? html`<p><b class="ok">Linked</b></p>`
      : s.status === 'qr'
        ? html`<p><b class="warn">Not linked</b>: scan the QR code below with WhatsApp → Linked devices → Link a device.</p>`
        : html`<p><b class="${s.status === 'offline' ? 'bad' : 'warn'}">${s.status === 'offline' ? 'Offline' : 'Connecting…'}</b>${s.lastError ? html`: ${s.lastError}` : ''}</p>`;
  const retry = s.status !== 'linked' && s.retryAt ? html`<p>Next try at ${timeTag(s.retryAt)}.</p>` : '';
  const pairing = s.status !== 'linked' ? pairingCodeHtml(s) : '';
  const qr = s.status === 'qr' && d.qrSvg ? html`<div class="qr" role="img" aria-label="WhatsApp link QR code">${raw(d.qrSvg)}</div>` : '';
  const me = s.me ? html`<dl class="facts"><dt>Linked number</dt><dd>${s.me.id ?? 'unknown'}</dd><dt>LID</dt><dd>${s.me.lid ?? 'unknown'}</dd>${s.me.name ? html`<dt>Name</dt><dd>${s.me.name}</dd>` : ''}</dl>` : '';
  return html`${state}${retry}${pairing}${qr}${me}`;
}

/**
 * The live part of the status view's AI providers: each leg's state and what its start check found, with the fix
 * (a wrong key, an unknown model: what to correct in .env), and the search key's check; never a key.
 */
export function legsRegion(d: Pick<StatusViewData, 'legs' | 'searchCheck'>): SafeHtml {
  const legs = d.legs.map(
    (l) =>
      html`<li data-leg="${l.name}"><b>${l.name}</b> <span class="hint">(<code>${l.model}</code>)</span>: <span class="${stateClass(l.state)}" data-state="${l.state}">${legStateInWords(l)}</span>${
        l.startCheck ? html`<br>${startCheckHtml(l.startCheck)}` : ''
      }</li>`,
  );
  const search = d.searchCheck ? html`<li data-leg="search"><b>search</b>: ${startCheckHtml(d.searchCheck)}</li>` : '';
  return legs.length || search ? html`<ul class="plain">${legs}${search}</ul>` : html`<p class="bad">No provider is configured.</p>`;
}

export function statusView(d: StatusViewData): SafeHtml {
  const disk = d.freeDisk ? html`${formatBytes(d.freeDisk.bytes)} free in <code>${d.freeDisk.dir}</code>` : html`unknown`;
  const relink = !d.canRelink
    ? html`<p class="hint">This transport cannot relink from here.</p>`
    : !d.sessionStored
      ? ''
      : html`<form method="post" action="/config/status/relink"><input type="hidden" name="_csrf" value="${d.csrf}"><button type="submit" class="danger" id="relink">Log out and relink…</button> <span class="hint">Asks for confirmation first.</span></form>`;
  const pairing =
    d.session.status === 'linked'
      ? ''
      : d.canPair
        ? html`<form method="post" action="/config/status/pairing-code" id="pairing"><input type="hidden" name="_csrf" value="${d.csrf}"><label for="pairing-phone">Or link with a phone number (pairing code instead of the QR)</label><input type="text" inputmode="tel" autocomplete="tel" id="pairing-phone" name="phone" placeholder="6281234567890" aria-describedby="pairing-help"><p class="hint" id="pairing-help">The phone number of the WhatsApp account, in international form. You get a code to type on that phone under Linked devices → Link with phone number instead.</p><button type="submit" class="secondary" id="get-pairing-code">Get a pairing code</button></form>`
        : html`<p class="hint" id="pairing">Linking with a phone number (pairing code) is not available with this transport.</p>`;
  return html`<section aria-labelledby="h-link"><h3 id="h-link">WhatsApp</h3><div data-region="link" aria-live="polite">${linkRegion(d)}</div>${pairing}${relink}</section>
<section id="ai-providers" aria-labelledby="h-ai-providers"><h3 id="h-ai-providers">AI providers</h3><div data-region="legs" aria-live="polite">${legsRegion(d)}</div><p><a href="/config/providers">Details and "Test now" in the providers view</a></p></section>
<section aria-labelledby="h-service"><h3 id="h-service">Service</h3><dl class="facts"><dt>Uptime</dt><dd data-region="uptime">${humanDuration(d.uptimeMs)}</dd><dt>Version</dt><dd>${d.version}</dd><dt>Disk</dt><dd>${disk}</dd></dl></section>
${incidentsSection(d.incidents, d.session.status === 'linked')}
<section id="problems" aria-labelledby="h-problems"><h3 id="h-problems">Last warnings and errors</h3>${
    d.problems.length
      ? html`<ul class="plain log">${d.problems.slice(0, 10).map((p) => html`<li>${timeTag(p.time)} <b class="${p.level === 'warn' ? 'warn' : 'bad'}">${p.level}</b>${p.plugin ? html` <span class="hint">[${p.plugin}]</span>` : ''} ${p.msg}</li>`)}</ul><p><a href="/config/log?level=warn">All warnings in the log view</a></p>`
      : html`<p class="ok">None since start.</p>`
  }</section>`;
}

/** The confirmation step of "log out and relink". */
export function relinkConfirmView(csrf: string): SafeHtml {
  return html`<section aria-labelledby="h-confirm"><h3 id="h-confirm">Log out of WhatsApp?</h3><p>The linked phone is logged out and the session is cleared. The bot answers nothing until someone scans the new QR code (shown on the status view).</p>
<p id="fresh-link-warning" class="warn"><b>A fresh link starts with no privacy tokens.</b> The new device holds none of the tokens WhatsApp exchanged with your contacts, so for a while it may refuse (error 463) messages the bot starts on its own (reminders, notices, results sent later) to people who have not written since; answers to people who write first go through. Relink only when the link is broken (logged out, a session that cannot be restored), not to cure a passing problem.</p>
<form method="post" action="/config/status/relink"><input type="hidden" name="_csrf" value="${csrf}"><input type="hidden" name="confirm" value="yes"><button type="submit" class="danger" id="confirm-relink">Yes, log out and relink</button> <a href="/config/status" id="cancel-relink">Cancel</a></form></section>`;
}

// ---------- providers ----------

export interface ProvidersViewData {
  legs: LegHealth[];
  audio: { keys: number; status: CapabilityStatus };
  capabilities: Array<{ name: string } & CapabilityStatus>;
  csrf: string;
}

export function providersRegion(d: Omit<ProvidersViewData, 'csrf'> & { csrf: string }): SafeHtml {
  const legs = d.legs.map(
    (l) => html`<article class="card" data-leg="${l.name}"><h4>${l.name} <span class="hint">(${l.kind === 'audio' ? 'audio key' : 'gateway'})</span></h4>
<p><span class="${stateClass(l.state)}" data-state="${l.state}">${legStateInWords(l)}</span></p>${l.startCheck ? html`
<p>${startCheckHtml(l.startCheck)}</p>` : ''}
<p class="hint">Model <code>${l.model}</code>${l.premiumModel ? html`, premium <code>${l.premiumModel}</code>` : ''} · ${number(l.requests)} requests, ${number(l.failures)} failures</p>
<form method="post" action="/config/providers/test"><input type="hidden" name="_csrf" value="${d.csrf}"><input type="hidden" name="leg" value="${l.name}"><button type="submit" class="secondary" aria-label="Test now: ${l.name}">Test now</button></form></article>`,
  );
  const caps = d.capabilities.map((c) => html`<li><span class="${capClass(c)}" aria-hidden="true">${capabilityMark(c)}</span> <b>${c.name}</b>: <span class="${capClass(c)}">${capabilityWord(c)}</span> — ${c.detail}</li>`);
  return html`<div class="cards">${legs.length ? legs : html`<p>No provider is configured.</p>`}</div>
<p id="audio-keys">Audio keys: <b>${d.audio.keys}</b> configured · <span class="${capClass(d.audio.status)}">${d.audio.status.detail}</span></p>
<h3 id="capabilities">Capabilities now</h3><ul class="plain">${caps}</ul>`;
}

export function providersView(d: ProvidersViewData): SafeHtml {
  return html`<section id="providers" aria-labelledby="h-legs"><h3 id="h-legs">Provider legs</h3><p class="hint">Live: states change as requests succeed and fail; "Test now" sends one tiny request to that leg.</p><div data-region="providers" aria-live="polite">${providersRegion(d)}</div></section>`;
}

// ---------- usage ----------

export interface UsageViewData {
  day: string;
  rows: Array<{ leg: string; model: string; requests: number; total: number; prompt?: number; cached?: number }>;
  users: Array<{ userId: string; tokens: number; premiumTokens: number }>;
  totals: { main: number; premium: number };
  limits: { requestsPerMinute: number; tokensPerDay: number; premiumTokensPerDay: number; quotaMainTokens: number; quotaPremiumTokens: number };
  problems: Array<{ field: string; message: string }>;
  csrf: string;
}

const percent = (used: number, max: number) => (max > 0 ? `${Math.round((used / max) * 1000) / 10}%` : 'no limit');

export function usageRegion(d: Pick<UsageViewData, 'day' | 'rows' | 'users' | 'totals' | 'limits'>): SafeHtml {
  const byProvider = new Map<string, number>();
  for (const r of d.rows) byProvider.set(r.leg, (byProvider.get(r.leg) ?? 0) + r.total);
  const providers = [...byProvider].map(([leg, total]) => html`<li><b>${leg}</b>: ${number(total)} tokens</li>`);
  const models = d.rows.map((r) => html`<tr><td>${r.leg}</td><td><code>${r.model}</code></td><td>${number(r.requests)}</td><td><b>${number(r.total)}</b></td><td>${number(r.prompt ?? 0)}</td><td>${number(r.cached ?? 0)}</td></tr>`);
  const users = d.users.map(
    (u) => html`<tr><td><code>${u.userId}</code></td><td>${number(u.tokens)} <span class="hint">(${percent(u.tokens, d.limits.tokensPerDay)} of ${d.limits.tokensPerDay ? number(d.limits.tokensPerDay) : 'no limit'})</span></td><td>${number(u.premiumTokens)} <span class="hint">(${percent(u.premiumTokens, d.limits.premiumTokensPerDay)})</span></td></tr>`,
  );
  const quota = (role: 'main' | 'premium', max: number) => html`<li>${role}: ${number(d.totals[role])} of ${max ? number(max) : 'no quota'} <span class="hint">(${percent(d.totals[role], max)})</span></li>`;
  return html`<h3>Today (${d.day}, UTC) per provider</h3><ul class="plain" id="usage-providers">${providers.length ? providers : html`<li>No usage yet today.</li>`}</ul>
<h3>Per model</h3><table id="usage-models"><thead><tr><th scope="col">Leg</th><th scope="col">Model</th><th scope="col">Requests</th><th scope="col">Tokens</th><th scope="col">Input</th><th scope="col">Cached input</th></tr></thead><tbody>${models.length ? models : html`<tr><td colspan="6">No usage yet today.</td></tr>`}</tbody></table>
<h3>Per user (against the daily budgets)</h3><table id="usage-users"><thead><tr><th scope="col">User</th><th scope="col">Tokens today</th><th scope="col">Premium today</th></tr></thead><tbody>${users.length ? users : html`<tr><td colspan="3">No user has used the AI today.</td></tr>`}</tbody></table>
<h3>All time against the account quotas</h3><ul class="plain">${quota('main', d.limits.quotaMainTokens)}${quota('premium', d.limits.quotaPremiumTokens)}</ul>`;
}

export function usageView(d: UsageViewData): SafeHtml {
  const field = (name: keyof UsageViewData['limits'], label: string, hint: string) => {
    const problem = d.problems.find((p) => p.field === name);
    return html`<div><label for="limit-${name}">${label}</label><input type="number" inputmode="numeric" min="0" step="1" id="limit-${name}" name="${name}" value="${String(d.limits[name])}"${problem ? html` aria-invalid="true" aria-describedby="err-${name}"` : ''}><p class="hint">${hint}</p>${problem ? html`<p class="field-error" id="err-${name}">${problem.message}</p>` : ''}</div>`;
  };
  return html`<section id="usage" aria-labelledby="h-usage"><h3 id="h-usage" class="visually-hidden">Usage</h3><div data-region="usage" aria-live="polite">${usageRegion(d)}</div></section>
<section aria-labelledby="h-limits"><h3 id="h-limits">Limits</h3><form method="post" action="/config/usage/limits" novalidate><input type="hidden" name="_csrf" value="${d.csrf}"><div class="grid">
${field('requestsPerMinute', 'AI requests per user per minute', '0 = no limit')}
${field('tokensPerDay', 'Tokens per user per day', '0 = no limit')}
${field('premiumTokensPerDay', 'Premium tokens per user per day', '0 = no limit')}
${field('quotaMainTokens', 'Account quota, main model (tokens)', 'warned in the log at 80%')}
${field('quotaPremiumTokens', 'Account quota, premium model (tokens)', 'warned in the log at 80%')}
</div><p><button type="submit" id="save-limits">Save limits</button></p></form></section>`;
}

// ---------- plugins ----------

export interface PluginCard {
  name: string;
  description: string;
  state: string;
  healthy: boolean;
  enabled: boolean;
  /** Set for a core plugin the owner cannot turn off: why (shown instead of the switch). */
  alwaysOn?: string;
  access: 'everyone' | 'owners' | string[];
  schema?: Record<string, any>;
  values: Record<string, unknown>;
  problems: Array<{ field: string; message: string }>;
  /** Shown open (just saved). */
  open?: boolean;
  /** The plugin's own panel (`PluginOffer.panel`): what it keeps, and its actions. */
  panel?: { tables: PanelTable[]; actions: Array<{ name: string; label: string; field: string }>; error?: string };
}

/** A plugin's panel: its tables (plain text, escaped) and one small form per action. */
function panelHtml(name: string, panel: NonNullable<PluginCard['panel']>, csrf: string): SafeHtml {
  return html`<section class="plugin-panel" aria-label="${name}: what it keeps">${panel.error ? html`<p class="notice error" role="alert">${panel.error}</p>` : ''}${panel.tables.map(
    (t) => html`${t.rows.length ? html`<table><caption>${t.caption}</caption><thead><tr>${t.columns.map((c) => html`<th scope="col">${c}</th>`)}</tr></thead><tbody>${t.rows.map((r) => html`<tr>${r.map((cell) => html`<td>${cell}</td>`)}</tr>`)}</tbody></table>` : html`<p class="hint"><b>${t.caption}:</b> ${t.empty ?? 'none'}</p>`}`,
  )}${panel.actions.map(
    (a) => html`<form method="post" action="/config/plugins/panel" class="panel-action"><input type="hidden" name="_csrf" value="${csrf}"><input type="hidden" name="plugin" value="${name}"><input type="hidden" name="action" value="${a.name}"><label for="pa-${name}-${a.name}">${a.label}: ${a.field}</label><input id="pa-${name}-${a.name}" name="value" maxlength="500"> <button type="submit" class="secondary">${a.label}</button></form>`,
  )}</section>`;
}

export function pluginsView(cards: PluginCard[], csrf: string): SafeHtml {
  return html`<p class="hint">Tap a plugin to see and change its settings. A field left empty uses the plugin's default; saving writes only what you changed.</p><div class="plugin-list">${cards.map((c) => {
    const hasOptions = Object.keys(c.schema?.properties ?? {}).length > 0;
    const choice = Array.isArray(c.access) ? 'list' : c.access;
    const shown = new Set(controlPaths(c.schema));
    const general = c.problems.filter((p) => !shown.has(p.field));
    // Collapsed by default (a phone shows the list of plugins, not every form); opened when it needs attention.
    const open = c.problems.length > 0 || c.open;
    return html`<details class="card plugin-card" id="plugin-${c.name}"${open ? html` open` : ''}><summary><h3 id="h-plugin-${c.name}">${c.name}</h3> <span class="${c.healthy ? 'ok' : 'warn'}">${c.state}</span></summary><p class="hint">${c.description}</p>
${c.panel ? panelHtml(c.name, c.panel, csrf) : ''}
${general.length ? html`<div class="notice error" role="alert">${general.map((p) => html`<p>${p.message}</p>`)}</div>` : ''}
<form method="post" action="/config/plugins/save" id="form-plugin-${c.name}" novalidate><input type="hidden" name="_csrf" value="${csrf}"><input type="hidden" name="plugin" value="${c.name}">
${c.alwaysOn ? html`<input type="hidden" name="enabled" value="on"><p class="hint">Always on: ${c.alwaysOn}.</p>` : html`<label class="inline switch" for="en-${c.name}"><input type="checkbox" role="switch" id="en-${c.name}" name="enabled"${c.enabled ? html` checked` : ''}> Enabled</label>`}
<label for="acc-${c.name}">Who may use it</label><select id="acc-${c.name}" name="access"><option value="everyone"${choice === 'everyone' ? html` selected` : ''}>everyone</option><option value="owners"${choice === 'owners' ? html` selected` : ''}>owners only</option><option value="list"${choice === 'list' ? html` selected` : ''}>these ids</option></select>
<label for="ids-${c.name}">Ids for "these ids" <span class="hint">(one per line)</span></label><textarea id="ids-${c.name}" name="ids" rows="2">${Array.isArray(c.access) ? c.access.join('\n') : ''}</textarea>
${hasOptions ? html`<fieldset><legend>Options</legend>${optionControls(c.name, c.schema, c.values, c.problems)}</fieldset>` : html`<p class="hint">No options.</p>`}
<p><button type="submit">Save ${c.name}</button></p></form></details>`;
  })}</div>`;
}

// ---------- log ----------

export function logLineHtml(l: TailLine): SafeHtml {
  return html`<li class="lvl-${l.level}">${timeTag(l.time)} <b class="${l.level === 'warn' ? 'warn' : l.level === 'error' || l.level === 'fatal' ? 'bad' : ''}">${l.level}</b>${l.part ? html` <span class="hint">[${l.part}]</span>` : ''} ${l.msg}</li>`;
}

export function logView(lines: TailLine[], level: string): SafeHtml {
  const levels = ['debug', 'info', 'warn', 'error'];
  return html`<section aria-labelledby="h-log"><h3 id="h-log" class="visually-hidden">Log</h3><form method="get" action="/config/log" id="log-filter"><label for="log-level">Show from level</label><select id="log-level" name="level">${levels.map((l) => html`<option value="${l}"${l === level ? html` selected` : ''}>${l}</option>`)}</select> <button type="submit" class="secondary">Apply</button></form>
<p class="hint">Live: new lines appear at the bottom as they are logged (keys are never shown).</p>
<ol id="log-lines" class="log" data-level="${level}" data-after="${String(lines.at(-1)?.seq ?? 0)}" aria-live="polite">${lines.map(logLineHtml)}</ol></section>`;
}
