import type { Activation, PairingRequest } from '../../core/operator.js';
import type { AccessMode } from '../../core/operator.js';
import { html, type SafeHtml } from '../html.js';
import { formatTime, timeTag } from '../format.js';

/** What the access view shows: the rules from config.json and what the owners decided (the access document of the store database). */
export interface AccessViewData {
  mode: AccessMode;
  groupsPolicy: 'allowlist' | 'open';
  takeoverMinutes: number;
  owners: string[];
  /** `access.allow` of config.json (edited on the settings view). */
  configAllow: string[];
  pending: PairingRequest[];
  approved: ReadonlyArray<{ id: string; name?: string; by: string; at: number }>;
  groups: Array<{ chatId: string; mode: Activation; by: string; at: number }>;
  personas: Array<{ chatId: string; text: string; by: string; at: number }>;
  paused: Array<{ chatId: string; until: number | null; by: string; at: number }>;
  maxPersonaChars: number;
  csrf: string;
  /** A persona form sent back with a problem: its chat (undefined for the "new" form), text and message. */
  personaDraft?: { chatId?: string; chat: string; text: string; problem: string };
  /** A group form sent back with a problem (the "open a group" form). */
  groupDraft?: { chat: string; problem: string };
}

const MODES: Activation[] = ['mention', 'always', 'off'];
const MODE_WORDS: Record<Activation, string> = { mention: 'mention: answers mentions and replies', always: 'always: reads every message', off: 'off: quiet (keeps context)' };

const hidden = (csrf: string, fields: Record<string, string> = {}) =>
  html`<input type="hidden" name="_csrf" value="${csrf}">${Object.entries(fields).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`)}`;

function pendingSection(d: AccessViewData): SafeHtml {
  const rows = d.pending.map((p) => {
    const who = html`${p.senderName ? html`<b>${p.senderName}</b> ` : ''}<code>+${p.sender.split('@')[0]?.split(':')[0] ?? p.sender}</code>`;
    const held = p.held.map((h) => html`<li>${h.media ? html`<span class="hint">(${h.media})</span> ` : ''}${h.text}</li>`);
    return html`<tr data-code="${p.code}"><td><b class="code">${p.code}</b></td><td>${who}</td><td>${timeTag(p.at)}</td><td><ul class="plain">${held}</ul></td>
<td><form method="post" action="/config/access/approve">${hidden(d.csrf, { code: p.code })}<button type="submit" aria-label="Approve ${p.code}">Approve</button></form>
<form method="post" action="/config/access/deny">${hidden(d.csrf, { code: p.code })}<button type="submit" class="secondary" aria-label="Deny ${p.code}">Deny</button></form></td></tr>`;
  });
  return html`<section id="pending" aria-labelledby="h-pending"><h3 id="h-pending">Pairing requests</h3><p class="hint">Strangers who wrote privately get a code; nothing they send reaches the model until an owner approves. Approving lets them in for good and answers what they sent meanwhile (as <code>.approve</code> does); codes expire after an hour.</p>
${rows.length ? html`<table><thead><tr><th scope="col">Code</th><th scope="col">Who</th><th scope="col">Since</th><th scope="col">What they sent</th><th scope="col">Decide</th></tr></thead><tbody>${rows}</tbody></table>` : html`<p>No pairing request is waiting.</p>`}</section>`;
}

function allowedSection(d: AccessViewData): SafeHtml {
  const rows = d.approved.map(
    (a) => html`<tr><td><code>+${a.id}</code>${a.name ? html` ${a.name}` : ''}</td><td>${a.by === 'dashboard' ? 'dashboard' : html`<code>${a.by.split('@')[0]}</code>`}, ${timeTag(a.at)}</td>
<td><form method="post" action="/config/access/revoke">${hidden(d.csrf, { id: a.id })}<button type="submit" class="secondary" aria-label="Remove +${a.id} from the allow list">Remove</button></form></td></tr>`,
  );
  const list = (ids: string[]) => (ids.length ? ids.map((id, i) => html`${i ? ', ' : ''}<code>${id}</code>`) : html`none`);
  return html`<section id="allowed" aria-labelledby="h-allowed"><h3 id="h-allowed">Allow list</h3>
<p>Private chats: <b>${d.mode}</b> (<code>access.mode</code>). Owners: ${list(d.owners)}. From config.json (<code>access.allow</code>, edited in Settings): ${list(d.configAllow)}.</p>
${rows.length ? html`<table id="approved"><thead><tr><th scope="col">Approved sender</th><th scope="col">Approved by</th><th scope="col">Action</th></tr></thead><tbody>${rows}</tbody></table>` : html`<p id="approved">No sender has been approved yet.</p>`}</section>`;
}

function activationSelect(id: string, current: Activation | undefined): SafeHtml {
  return html`<select id="${id}" name="mode">${MODES.map((m) => html`<option value="${m}"${m === current ? html` selected` : ''}>${MODE_WORDS[m]}</option>`)}</select>`;
}

function groupsSection(d: AccessViewData): SafeHtml {
  const rows = d.groups.map(
    (g, i) => html`<tr data-chat="${g.chatId}"><td><code>${g.chatId}</code></td><td><form method="post" action="/config/access/activation">${hidden(d.csrf, { chat: g.chatId })}<label for="act-${i}" class="visually-hidden">Activation of ${g.chatId}</label>${activationSelect(`act-${i}`, g.mode)} <button type="submit" class="secondary" aria-label="Save activation of ${g.chatId}">Save</button></form></td><td class="hint">${g.by === 'dashboard' ? 'dashboard' : g.by.split('@')[0]}, ${formatTime(g.at)}</td></tr>`,
  );
  const draft = d.groupDraft;
  return html`<section id="groups" aria-labelledby="h-groups"><h3 id="h-groups">Groups</h3><p class="hint"><code>groups.policy</code> is <b>${d.groupsPolicy}</b>: ${d.groupsPolicy === 'allowlist' ? 'the bot takes part only in groups opened here or with .activation.' : 'groups nobody set answer mentions.'}</p>
${rows.length ? html`<table><thead><tr><th scope="col">Group</th><th scope="col">Activation</th><th scope="col">Set by</th></tr></thead><tbody>${rows}</tbody></table>` : html`<p>No owner has set a group's activation yet.</p>`}
<form method="post" action="/config/access/activation" id="open-group" novalidate>${hidden(d.csrf)}<h4>Set another group</h4><label for="new-group">Group id</label><input type="text" id="new-group" name="chat" placeholder="120363000000000000@g.us" value="${draft?.chat ?? ''}"${draft ? html` aria-invalid="true" aria-describedby="new-group-err"` : ''}>${draft ? html`<p class="field-error" id="new-group-err">${draft.problem}</p>` : ''}<label for="new-group-mode">Activation</label>${activationSelect('new-group-mode', 'mention')}<p><button type="submit">Set activation</button></p></form></section>`;
}

function personaForm(d: AccessViewData, index: number, chatId: string | undefined, text: string, problem?: string): SafeHtml {
  const id = `persona-${index}`;
  const chatField = chatId
    ? html`<input type="hidden" name="chat" value="${chatId}">`
    : html`<label for="${id}-chat">Chat id (or phone digits for a private chat)</label><input type="text" id="${id}-chat" name="chat" placeholder="62811111111 or 120363000000000000@g.us" value="${d.personaDraft && !d.personaDraft.chatId ? d.personaDraft.chat : ''}">`;
  const described = html` aria-describedby="${id}-help${problem ? ` ${id}-err` : ''}"${problem ? html` aria-invalid="true"` : ''}`;
  return html`<form method="post" action="/config/access/persona" novalidate>${hidden(d.csrf)}${chatField}<label for="${id}">${chatId ? html`Persona of <code>${chatId}</code>` : 'Instructions'}</label><textarea id="${id}" name="text" rows="4" maxlength="${d.maxPersonaChars}"${described}>${text}</textarea><p class="hint" id="${id}-help">At most ${d.maxPersonaChars} characters; added to this chat's system prompt only.</p>${problem ? html`<p class="field-error" id="${id}-err">${problem}</p>` : ''}
<p><button type="submit" name="action" value="save"${chatId ? html` aria-label="Save the persona of ${chatId}"` : ''}>${chatId ? 'Save' : 'Add persona'}</button>${chatId ? html` <button type="submit" name="action" value="remove" class="secondary" aria-label="Remove the persona of ${chatId}">Remove</button>` : ''}</p></form>`;
}

function personasSection(d: AccessViewData): SafeHtml {
  const draft = d.personaDraft;
  const cards = d.personas.map((p, i) => {
    const mine = draft?.chatId === p.chatId ? draft : undefined;
    return html`<article class="card" data-chat="${p.chatId}">${personaForm(d, i, p.chatId, mine ? mine.text : p.text, mine?.problem)}<p class="hint">Set by ${p.by === 'dashboard' ? 'the dashboard' : p.by.split('@')[0]}, ${formatTime(p.at)}</p></article>`;
  });
  const fresh = draft && !draft.chatId ? draft : undefined;
  return html`<section id="personas" aria-labelledby="h-personas"><h3 id="h-personas">Personas</h3><p class="hint">A chat's own instructions (<code>.persona</code>): used in that chat only.</p>
${cards.length ? html`<div class="cards">${cards}</div>` : html`<p>No chat has a persona.</p>`}
<div class="card" id="new-persona"><h4>Give a chat a persona</h4>${personaForm(d, d.personas.length, undefined, fresh?.text ?? '', fresh?.problem)}</div></section>`;
}

function pausedSection(d: AccessViewData): SafeHtml {
  const rows = d.paused.map(
    (p) => html`<tr data-chat="${p.chatId}"><td><code>${p.chatId}</code></td><td>${p.until === null ? html`until <code>.bot on</code>` : html`until ${timeTag(p.until)}`}</td><td class="hint">${p.by === 'phone' ? 'written from the phone' : p.by === 'dashboard' ? 'dashboard' : p.by.split('@')[0]}</td>
<td><form method="post" action="/config/access/resume">${hidden(d.csrf, { chat: p.chatId })}<button type="submit" aria-label="Hand back ${p.chatId} to the bot">Hand back</button></form></td></tr>`,
  );
  return html`<section id="paused" aria-labelledby="h-paused"><h3 id="h-paused">Paused chats</h3><p class="hint">When you write into a chat from the phone the bot stays quiet there for ${d.takeoverMinutes} minutes (<code>takeover.minutes</code>); <code>.bot off</code> pauses it until <code>.bot on</code>. "Hand back" does what <code>.bot on</code> does.</p>
${rows.length ? html`<table><thead><tr><th scope="col">Chat</th><th scope="col">Paused</th><th scope="col">By</th><th scope="col">Action</th></tr></thead><tbody>${rows}</tbody></table>` : html`<p>The bot is not paused in any chat.</p>`}</section>`;
}

/** The access view: pairing requests, the allow list, groups' activation, personas and paused chats. */
export function accessView(d: AccessViewData): SafeHtml {
  return html`${pendingSection(d)}${allowedSection(d)}${groupsSection(d)}${personasSection(d)}${pausedSection(d)}`;
}
