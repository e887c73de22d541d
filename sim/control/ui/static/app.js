// dubsim dashboard: holds the event stream GET /_sim/events open and reads
// the control API (/_sim) only when it says something changed (fidelity
// ED1), then renders each section; the projects list is read a page at a
// time. Server data only ever reaches the page through textContent
// and setAttribute (see h below): journal entries hold arbitrary bodies.

// ---- Addresses -----------------------------------------------------------

// Every address the page calls or links is built from ROOT (never a literal
// path from /): SERVED is the prefix dubsim served the page under, from its
// <meta name="dubsim-base"> (a sandbox's /sbx/{id}, "" for the default
// instance); ROOT adds whatever prefix a proxy put before that ("" when none).
const SERVED = document.querySelector('meta[name="dubsim-base"]')?.content || '';
const SEEN = location.pathname.indexOf(SERVED + '/_sim/ui');
const ROOT = (SEEN > 0 ? location.pathname.slice(0, SEEN) : '') + SERVED;
const BASE = ROOT + '/_sim';
const PAGE_LIMIT = 50;
const RECONNECT_MS = 2000;
const JOURNAL_LIMIT = 100;
const METHODS = ['GET', 'POST', 'PATCH', 'PUT', 'DELETE'];
const reducedMotion = matchMedia('(prefers-reduced-motion: reduce)');

// ---- DOM helpers ---------------------------------------------------------

const $ = (id) => document.getElementById(id);

// h builds an element: attrs are set with setAttribute (on* become listeners,
// a few are properties); children are nodes or text, arrays are flattened,
// null/false/undefined are skipped.
function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'value' || k === 'checked' || k === 'selected') el[k] = v;
    else if (k === 'style') for (const [p, s] of Object.entries(v)) el.style.setProperty(p, s); // CSSOM: allowed by the CSP
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c == null || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

// keepFocus runs work (which replaces oldRoot's content or oldRoot itself)
// and, when the focus was inside oldRoot on an element with data-fk, puts it
// back on the element with the same data-fk inside newRoot.
function keepFocus(oldRoot, work, newRoot = oldRoot) {
  const active = document.activeElement;
  const fk = active && oldRoot.contains(active) ? active.closest('[data-fk]')?.getAttribute('data-fk') : null;
  work();
  if (fk != null) newRoot.querySelector(`[data-fk="${CSS.escape(fk)}"]`)?.focus({ preventScroll: true });
}

// update replaces el's children with build(data) only when data changed
// (compared as JSON), so focus, selections and open <details> survive.
function update(el, data, build) {
  const json = JSON.stringify(data);
  if (el._json === json) return;
  el._json = json;
  keepFocus(el, () => el.replaceChildren(...[build(data)].flat().filter(Boolean)));
}

// reconcile makes parent's keyed children match items ({id, data, build}),
// reusing each element whose data did not change and moving none of them.
function reconcile(parent, items) {
  const ids = new Set(items.map((it) => it.id));
  for (const el of [...parent.children]) if ('_id' in el && !ids.has(el._id)) el.remove();
  const byId = new Map();
  for (const el of parent.children) if ('_id' in el) byId.set(el._id, el);
  let next = byId.values().next().value || null;
  for (const it of items) {
    const json = JSON.stringify(it.data);
    let el = byId.get(it.id);
    if (el && el._json !== json) {
      const fresh = it.build(it.data);
      fresh._id = it.id;
      fresh._json = json;
      const old = el;
      keepFocus(old, () => old.replaceWith(fresh), fresh);
      if (next === el) next = fresh;
      el = fresh;
    } else if (!el) {
      el = it.build(it.data);
      el._id = it.id;
      el._json = json;
    }
    if (el === next) next = el.nextElementSibling;
    else parent.insertBefore(el, next);
  }
}

function showError(el, msg) {
  if (!el) return;
  const text = msg || '';
  if (el.textContent !== text) el.textContent = text;
  el.hidden = !text;
}

// ---- Formatting ----------------------------------------------------------

const isTime = (s) => typeof s === 'string' && /^\d{4}-\d\d-\d\dT/.test(s) && !s.startsWith('0001-');

// timeEl shows HH:MM:SS (UTC, as the simulator writes it) with the full
// value in datetime and title.
function timeEl(iso, prefix) {
  if (!isTime(iso)) return h('span', { class: 'muted' }, '—');
  return h('time', { datetime: iso, title: iso, class: 'mono' }, (prefix || '') + iso.slice(11, 19));
}

const ms = (s) => Date.parse(s);

function fmtDuration(seconds) {
  if (seconds == null || !isFinite(seconds)) return '—';
  const s = Math.round(Math.abs(seconds));
  const parts = [[86400, 'd'], [3600, 'h'], [60, 'm'], [1, 's']];
  const out = [];
  let rest = s;
  for (const [n, u] of parts) if (rest >= n || (u === 's' && !out.length)) { out.push(Math.floor(rest / n) + u); rest %= n; }
  return out.slice(0, 2).join(' ');
}

// fmtClip formats script milliseconds as m:ss.mmm.
function fmtClip(v) {
  if (v == null) return '—';
  const m = Math.floor(v / 60000), s = Math.floor((v % 60000) / 1000), r = v % 1000;
  return `${m}:${String(s).padStart(2, '0')}.${String(r).padStart(3, '0')}`;
}

function fmtBytes(n) {
  if (n == null) return '—';
  if (n < 1024) return n + ' B';
  const u = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n, i = -1;
  do { v /= 1024; i++; } while (v >= 1024 && i < u.length - 1);
  return v.toFixed(v < 10 ? 1 : 0) + ' ' + u[i];
}

const yesNo = (b) => (b ? 'yes' : 'no');
const dash = (v) => (v == null || v === '' ? '—' : String(v));

// toneOf maps a status word or code to a badge colour class.
function toneOf(s) {
  const v = String(s);
  if (/^(ready|completed|upload_completed|running|2\d\d|3\d\d)$/.test(v)) return 'ok';
  if (/^(in_progress|upload_started|pending)$/.test(v)) return 'info';
  if (/^(error|upload_failed|aborted|0|5\d\d)$/.test(v)) return 'bad';
  if (/^(4\d\d|warning|stopped|frozen)$/.test(v)) return 'warn';
  return 'neutral';
}
const badge = (text, tone) => h('span', { class: `badge badge-${tone || toneOf(text)}` }, String(text));

// table builds a labelled table in a scrollable, keyboard-reachable box.
function table(caption, headers, rows, cls) {
  return h('div', { class: 'table-wrap', tabindex: 0, role: 'region', 'aria-label': caption },
    h('table', { class: cls },
      h('caption', {}, caption),
      h('thead', {}, h('tr', {}, headers.map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, rows)));
}

function pre(text) {
  return h('pre', { class: 'code', tabindex: 0 }, text);
}

// pretty returns JSON text indented, or the text as it is.
function pretty(text) {
  if (text == null) return '';
  try { return JSON.stringify(JSON.parse(text), null, 2); } catch { return String(text); }
}

function dl(pairs) {
  return h('dl', { class: 'fields' }, pairs.filter(Boolean).map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
}

// ---- Control API ---------------------------------------------------------

class ApiError extends Error {
  constructor(status, name, message) { super(message); this.status = status; this.name = name || 'Error'; }
}

// ---- Control token -------------------------------------------------------
//
// A dubsim started with --control-token answers control calls only with the
// token. The dashboard takes it once, from ?token= in its address (removed
// from the address at once) or by asking after the first 401, and keeps it
// in sessionStorage: it is gone when the tab closes.

const TOKEN_KEY = 'dubsim.control-token';
(function takeTokenFromAddress() {
  const url = new URL(location.href);
  const t = url.searchParams.get('token');
  if (t == null) return;
  try { sessionStorage.setItem(TOKEN_KEY, t); } catch { /* private mode */ }
  url.searchParams.delete('token');
  history.replaceState(null, '', url.pathname + url.search + url.hash);
})();

function controlToken() { try { return sessionStorage.getItem(TOKEN_KEY) || ''; } catch { return ''; } }

// askToken asks for the token once for every call refused at the same time;
// it resolves to true when a token was given. refused says the token sent
// was wrong, so the prompt says so. After a cancel it does not ask again
// until the page is reloaded (the refusals say what is missing).
let asking = null;
let declined = false;
const TOKEN_PROMPT = 'This dubsim protects its control API with a token (--control-token or DUBSIM_CONTROL_TOKEN). Enter it:';
const TOKEN_REFUSED = 'The control token was refused: it is not the --control-token (or DUBSIM_CONTROL_TOKEN) this dubsim was started with. Enter the right one:';
function askToken(refused) {
  if (declined) return Promise.resolve(false);
  if (!asking) {
    asking = new Promise((resolve) => setTimeout(() => {
      const t = (prompt(refused ? TOKEN_REFUSED : TOKEN_PROMPT, '') || '').trim();
      if (t) { try { sessionStorage.setItem(TOKEN_KEY, t); } catch { /* private mode */ } } else declined = true;
      asking = null;
      resolve(Boolean(t));
    }, 0));
  }
  return asking;
}

// tokenRefusal is the message of a control call refused for its token, as
// the dashboard shows it (the API's own message speaks to programs).
function tokenRefusal(sent) {
  return sent
    ? 'Refused: the control token entered is wrong. Reload the page to enter the --control-token this dubsim was started with.'
    : 'Refused: this dubsim needs its control token (--control-token). Reload the page to enter it.';
}

// controlHeaders are the headers of every control call: X-Dubsim-Control
// (no HTML form can send it, so dubsim knows the call is a program's) and
// the token when there is one.
function controlHeaders() {
  const hdr = { Accept: 'application/json', 'X-Dubsim-Control': '1' };
  const t = controlToken();
  if (t) hdr.Authorization = `Bearer ${t}`;
  return hdr;
}

// api calls the control API; errors carry the envelope's message.
async function api(method, path, body, retried) {
  const opts = { method, headers: controlHeaders(), cache: 'no-store' };
  const sent = controlToken();
  if (body !== undefined) {
    opts.headers['Content-Type'] = 'application/json';
    opts.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(BASE + path, opts);
  } catch (e) {
    throw new ApiError(0, 'NetworkError', `Cannot reach the simulator (${e.message})`);
  }
  if (res.status === 401 && !retried) {
    // A call refused without the token (or with an old one) while another
    // call's prompt got a new token retries with it, without asking again.
    const now = controlToken();
    if ((now && now !== sent) || await askToken(Boolean(sent))) return api(method, path, body, true);
  }
  const text = await res.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { /* not JSON */ }
  if (!res.ok) {
    const msg = res.status === 401 && data?.error === 'UnauthorizedError'
      ? tokenRefusal(sent)
      : (data && (data.message || data.error)) || `${res.status} ${res.statusText}`.trim();
    throw new ApiError(res.status, data?.error, msg);
  }
  return data;
}

// ---- Dashboard state (kept across refreshes) -----------------------------

const ui = {
  state: null,
  selected: load('dubsim.selected') || '',
  detail: null, // {id, data} or {id, error}
  journalQuery: { method: '', path: '', status: '', key: '' },
  live: true,
  reportKey: '',
  studioCompany: '',
  rules: new Map(), // every fault rule seen, by id: used-up rules vanish from the list
  errors: {}, // source -> message, for the status area
  cursors: [''], // the cursor of each page read so far; the last is shown
  next: '', // next_cursor of the page shown
  clock: null, // {now (ms), scale, frozen, at (performance.now())} of the last event
  sandboxes: null, // true: GET /_sim/sandboxes answers; false: 404, not asked again
};

function load(k) { try { return sessionStorage.getItem(k); } catch { return null; } }
function save(k, v) { try { sessionStorage.setItem(k, v); } catch { /* private mode */ } }

function say(msg) {
  const el = $('status-message');
  // Re-set even an equal message so screen readers announce the new action.
  el.textContent = '';
  el.textContent = msg;
}

// ---- Clock ---------------------------------------------------------------

function renderClock(st) {
  const now = $('clock-now');
  if (now.textContent !== st.now) { now.textContent = st.now; now.setAttribute('datetime', st.now); }
  const state = st.frozen ? 'frozen' : 'running';
  const stateEl = $('clock-state');
  if (stateEl.textContent !== state) {
    stateEl.textContent = state;
    stateEl.className = `badge badge-${toneOf(state)}`;
  }
  const scale = String(st.time_scale);
  if ($('clock-scale').textContent !== scale) $('clock-scale').textContent = scale;
  const t = st.pending_transitions?.[0];
  let next = 'No pending transition: nothing will change until a client acts.';
  if (t) {
    const wait = (ms(t.due_at) - ms(st.now)) / 1000;
    next = `Next: ${t.resource} ${t.id} goes from ${t.from} to ${t.to} at ${t.due_at}` +
      (wait > 0 ? `, in ${fmtDuration(wait)} of simulated time.` : ', now due.');
    if (st.pending_transitions.length > 1) next += ` ${st.pending_transitions.length - 1} more pending.`;
  }
  if ($('clock-next').textContent !== next) $('clock-next').textContent = next;
}

// ---- Accounts ------------------------------------------------------------

function renderAccounts(accounts) {
  update($('accounts-body'), accounts, (list) => table(`Accounts (${list.length})`,
    ['API key', 'Name', 'Plan', 'Features', 'Balance / initial (min)'],
    list.map((a) => h('tr', { 'data-api-key': a.api_key },
      h('td', { class: 'mono nowrap' }, a.api_key),
      h('td', {}, a.name, a.fixture ? h('span', { class: 'muted' }, ' (fixture)') : null),
      h('td', {}, a.plan),
      h('td', {}, [a.retranslation_enabled && 're-translation', a.cloning_enabled && 'cloning'].filter(Boolean).join(', ') || 'none'),
      h('td', { class: 'num' }, `${a.balance_minutes} / ${a.initial_balance_minutes}`)))));
  // Key pickers elsewhere follow the account list.
  const keys = accounts.map((a) => a.api_key);
  update($('account-keys'), keys, (ks) => ks.map((k) => h('option', { value: k })));
  const rk = $('reset-key');
  if (rk._json !== JSON.stringify(keys)) {
    const cur = rk.value;
    rk._json = JSON.stringify(keys);
    rk.replaceChildren(h('option', { value: '' }, 'Everything (fixture accounts restored)'), ...keys.map((k) => h('option', { value: k }, `Account ${k}`)));
    if (keys.includes(cur)) rk.value = cur;
  }
  const sel = $('report-key');
  if (sel._json !== JSON.stringify(keys)) {
    const cur = sel.value || ui.reportKey;
    sel._json = JSON.stringify(keys);
    sel.replaceChildren(...keys.map((k) => h('option', { value: k }, k)));
    if (keys.includes(cur)) sel.value = cur;
  }
}

// ---- Platform projects ---------------------------------------------------

function renderProjects(st) {
  const list = st.projects || [];
  const body = $('projects-body');
  if (!list.length) {
    update(body, 'empty', () => h('p', { class: 'muted' }, 'No platform project yet. Create one with POST /api/v1/projects.'));
  } else {
    if (!body.querySelector('table')) {
      body._json = null;
      body.replaceChildren(table('Platform projects, newest first',
        ['Name / id', 'Account', 'Languages', 'Status', 'Created', 'Due / completed', 'Cost', ''], [], 'projects-table'));
    }
    reconcile(body.querySelector('tbody'), list.map((p) => ({
      id: p.id, data: { p, sel: p.id === ui.selected }, build: projectRow,
    })));
  }
  const caption = body.querySelector('caption');
  if (caption) caption.textContent = `Platform projects, page ${ui.cursors.length} (${list.length} shown, ${PAGE_LIMIT} a page), newest first`;
}

function statePath() {
  const c = ui.cursors[ui.cursors.length - 1];
  return `/state?limit=${PAGE_LIMIT}` + (c ? `&cursor=${encodeURIComponent(c)}` : '');
}

function renderPager() {
  $('projects-prev').disabled = ui.cursors.length <= 1;
  $('projects-next').disabled = !ui.next;
  const text = `Page ${ui.cursors.length}${ui.next ? '' : ' (last)'}`;
  if ($('projects-page').textContent !== text) $('projects-page').textContent = text;
}

function projectRow({ p, sel }) {
  const label = p.name || p.id;
  return h('tr', { 'data-project-id': p.id, class: sel ? 'selected' : null, 'aria-current': sel ? 'true' : null },
    h('td', {}, p.name ? [h('span', { class: 'strong' }, p.name), h('br')] : null, h('span', { class: p.name ? 'mono muted small' : 'mono' }, p.id)),
    h('td', { class: 'mono' }, p.api_key),
    h('td', {}, `${p.source_lang} → ${p.target_lang}`),
    h('td', { class: 'status' }, badge(p.status)),
    h('td', {}, timeEl(p.created_at)),
    h('td', {}, p.due_at && (p.status === 'in_progress' || !p.completed_at) ? timeEl(p.due_at, 'due ')
      : p.completed_at ? timeEl(p.completed_at, 'done ') : '—',
      p.retranslation_running ? h('span', { class: 'small muted' }, ' (re-translating)') : null),
    h('td', { class: 'num' }, `${p.cost_minutes} min`, p.refunded ? h('span', { class: 'small' }, ' refunded') : null),
    h('td', {}, h('button', {
      type: 'button', 'data-fk': 'details', 'aria-label': `Details ${label}`, 'aria-controls': 'project-detail',
      onclick: () => selectProject(p.id),
    }, 'Details')));
}

function selectProject(id) {
  ui.selected = id;
  save('dubsim.selected', id);
  ui.detail = null;
  refreshNow().then(() => {
    const title = $('project-detail-title');
    if (title) {
      title.focus({ preventScroll: true });
      $('project-detail').scrollIntoView({ behavior: reducedMotion.matches ? 'auto' : 'smooth', block: 'start' });
    }
  });
}

// renderDetail draws the selected project from GET /_sim/projects/{id}, or
// from the state's summary when that call fails.
function renderDetail(st) {
  const box = $('project-detail');
  const summary = st?.projects?.find((p) => p.id === ui.selected);
  if (!ui.selected || (st && !summary && !ui.detail?.data)) {
    if (ui.selected && st) say(`Project ${ui.selected} no longer exists.`);
    if (st) { ui.selected = ''; save('dubsim.selected', ''); }
    box.hidden = true;
    box._built = false;
    update(box, null, () => []);
    return;
  }
  const p = ui.detail?.data || summary;
  const err = ui.detail?.error;
  box.hidden = false;
  if (!box._built) {
    box._built = true;
    box._json = null;
    box.replaceChildren(
      h('div', { class: 'detail-head' },
        h('h3', { id: 'project-detail-title', tabindex: -1 }),
        h('button', { type: 'button', onclick: closeDetail }, 'Close details')),
      h('p', { class: 'section-error', id: 'project-detail-error', hidden: true }),
      h('div', { class: 'detail-grid' },
        h('div', { class: 'detail-fields' }),
        h('div', { class: 'detail-side' },
          h('div', { class: 'detail-audio' }),
          h('div', { class: 'detail-timeline' }))),
      h('div', { class: 'detail-scripts' }));
  }
  const title = $('project-detail-title');
  const name = p.name || p.id;
  if (title.textContent !== name) title.textContent = name;
  showError($('project-detail-error'), err ? `Full project unavailable (${err}); showing the summary from /_sim/state.` : '');
  update(box.querySelector('.detail-fields'), p, detailFields);
  update(box.querySelector('.detail-audio'), { id: p.id, url: p.audio_url, full: !err }, audioPart);
  update(box.querySelector('.detail-timeline'), { p, now: st?.now || ui.state?.now }, timeline);
  update(box.querySelector('.detail-scripts'), err ? null : {
    src: p.source_script || [], dst: p.target_script || [], speakers: p.speakers || [], pending: !!p.scripts_pending,
    pending: p.pending_retranslation || null, dur: p.duration_ms, sl: p.source_lang, tl: p.target_lang,
  }, scriptsPart);
}

function closeDetail() {
  const id = ui.selected;
  ui.selected = '';
  save('dubsim.selected', '');
  refreshNow().then(() => document.querySelector(`tr[data-project-id="${CSS.escape(id)}"] button`)?.focus());
}

function detailFields(p) {
  const flag = (b) => (b == null ? null : yesNo(b));
  return dl([
    ['Id', h('span', { class: 'mono' }, p.id)],
    ['Account', h('span', { class: 'mono' }, p.api_key)],
    ['Status', h('span', { class: 'status' }, badge(p.status))],
    p.planned_outcome && ['Planned outcome', p.planned_outcome + (p.planned_error_message ? ': ' + p.planned_error_message : '')],
    p.error_message && ['Error message', p.error_message],
    ['Source video', h('span', { class: 'break' }, p.source_video_url)],
    ['Languages', `${p.source_lang} → ${p.target_lang}`],
    ['Duration', `${fmtClip(p.duration_ms)}${p.duration_source ? ` (${p.duration_source})` : ''}`],
    ['Cost', `${p.cost_minutes} min${p.refunded ? ', refunded' : ''}`],
    p.mixing_mode != null && ['Mixing mode', dash(p.mixing_mode)],
    p.tts_volume != null && ['TTS volume', dash(p.tts_volume)],
    p.use_soundalike_voices != null && ['Soundalike voices', flag(p.use_soundalike_voices)],
    p.use_emotional_transfer != null && ['Emotional transfer', flag(p.use_emotional_transfer)],
    p.use_fixed_timings != null && ['Fixed timings', flag(p.use_fixed_timings)],
    p.has_glossary != null && ['Glossary', flag(p.has_glossary)],
    ['Translations', String(p.translations_count ?? 0)],
    ['Output generation', String(p.output_generation ?? 0)],
    p.retranslation_running != null && ['Re-translation running', yesNo(p.retranslation_running)],
    ['Created', timeEl(p.created_at)],
    ['Estimated completion', timeEl(p.due_at || [...(p.history || [])].reverse().find((e) => isTime(e.estimated_completion))?.estimated_completion)],
    ['Completed', timeEl(p.completed_at)],
  ]);
}

function audioPart({ id, url, full }) {
  if (!full) return [];
  // Only the simulator's own audio route is played, under the page's ROOT.
  if (!url || !/\/_sim\/projects\/[^/]+\/audio\.wav$/.test(url)) return h('p', { class: 'muted' }, 'No output yet.');
  const src = `${BASE}/projects/${encodeURIComponent(id)}/audio.wav`;
  if (controlToken()) return tokenAudio(src);
  return h('figure', { class: 'audio' },
    h('figcaption', { id: 'dubbed-audio-label' }, 'Dubbed audio'),
    h('audio', { controls: true, preload: 'none', src, 'aria-labelledby': 'dubbed-audio-label' }),
    h('p', { class: 'small' }, h('a', { href: src, download: '' }, 'Download WAV')));
}

// tokenAudio: an <audio> element cannot send the control token, so with one
// the file is fetched with it on request and played from memory.
function tokenAudio(src) {
  const fig = h('figure', { class: 'audio' }, h('figcaption', { id: 'dubbed-audio-label' }, 'Dubbed audio'));
  const load = h('button', { type: 'button', 'data-fk': 'load-audio', onclick: async () => {
    load.disabled = true;
    try {
      const res = await fetch(src, { headers: controlHeaders(), cache: 'no-store' });
      if (!res.ok) throw new Error(`${res.status} ${res.statusText}`.trim());
      const blob = URL.createObjectURL(await res.blob());
      load.replaceWith(h('audio', { controls: true, src: blob, 'aria-labelledby': 'dubbed-audio-label' }),
        h('p', { class: 'small' }, h('a', { href: blob, download: 'audio.wav' }, 'Download WAV')));
    } catch (e) {
      load.disabled = false;
      say(`Could not load the audio (${e.message})`);
    }
  } }, 'Load audio');
  fig.append(load);
  return fig;
}

// timelineEvents lists what happened (and is expected) to a project in time order.
function timelineEvents(p) {
  const ev = (p.history || []).map((e) => ({ at: e.at, label: e.kind.replace(/_/g, ' '), kind: e.kind, message: e.message }));
  if (!ev.some((e) => e.kind === 'created') && isTime(p.created_at)) ev.push({ at: p.created_at, label: 'created', kind: 'created' });
  // Each run (creation, re-translation) keeps the completion it promised;
  // the current run's due time is the estimate still open.
  const runs = (p.history || []).filter((e) => isTime(e.estimated_completion));
  runs.forEach((e, i) => {
    const open = i === runs.length - 1 && isTime(p.due_at);
    const what = e.kind === 'created' ? 'estimated completion' : 'estimated re-translation';
    ev.push({ at: open ? p.due_at : e.estimated_completion, label: open ? `${what} (${p.planned_outcome || 'ready'})` : what, kind: 'estimated' });
  });
  if (!runs.length && isTime(p.due_at)) ev.push({ at: p.due_at, label: `estimated completion (${p.planned_outcome || 'ready'})`, kind: 'estimated' });
  if (isTime(p.completed_at) && !ev.some((e) => e.at === p.completed_at && /completed|failed/.test(e.kind))) {
    ev.push({ at: p.completed_at, label: 'actual completion', kind: 'completed' });
  }
  return ev.filter((e) => isTime(e.at)).sort((a, b) => ms(a.at) - ms(b.at));
}

function timeline({ p, now }) {
  const ev = timelineEvents(p);
  if (!ev.length) return [];
  const t0 = ms(ev[0].at);
  const t1 = Math.max(ms(ev[ev.length - 1].at), isTime(now) ? ms(now) : 0, t0 + 1000);
  const frac = (iso) => (ms(iso) - t0) / (t1 - t0);
  const pos = (iso) => `${frac(iso) * 100}%`;
  // Labels near an end are aligned inwards so they stay inside the box.
  const edge = (iso) => (frac(iso) < 0.15 ? ' edge-left' : frac(iso) > 0.85 ? ' edge-right' : '');
  const axis = h('div', { class: 'axis', 'aria-hidden': 'true' },
    h('div', { class: 'axis-line' }),
    ev.map((e, i) => h('div', {
      class: `mark mark-${e.kind} ${i % 2 ? 'below' : 'above'}${edge(e.at)}`, style: { left: pos(e.at) },
      title: `${e.label} at ${e.at}${e.message ? `: ${e.message}` : ''}`,
    }, h('span', { class: 'mark-label' }, e.label, h('br'), e.at.slice(11, 19)))),
    isTime(now) ? h('div', { class: 'mark mark-now', style: { left: pos(now) }, title: `simulated now ${now}` }) : null);
  return [
    h('h4', {}, 'Status timeline'),
    axis,
    h('p', { class: 'small muted' }, `From ${ev[0].at} to ${isTime(now) ? now : ev[ev.length - 1].at} (the dashed line is simulated now).`),
    h('ol', { class: 'event-list' }, ev.map((e) => h('li', {},
      timeEl(e.at), ' ', h('span', { class: e.kind === 'estimated' ? 'estimated' : null }, e.label),
      e.message ? `: ${e.message}` : ''))),
  ];
}

const SPEAKER_COLOURS = 8;
const speakerClass = (id) => `spk-${(((Number(id) || 0) % SPEAKER_COLOURS) + SPEAKER_COLOURS) % SPEAKER_COLOURS}`;

function scriptsPart(d) {
  if (!d) return h('p', { class: 'muted' }, 'Scripts and speakers need GET /_sim/projects/{id}.');
  const rows = [];
  for (let i = 0; i < Math.max(d.src.length, d.dst.length); i++) {
    const s = d.src[i], t = d.dst[i];
    const a = s || t;
    const span = `${fmtClip(a.start_ms)}–${fmtClip(a.end_ms)}`;
    const other = s && t && (s.start_ms !== t.start_ms || s.end_ms !== t.end_ms) ? ` (target ${fmtClip(t.start_ms)}–${fmtClip(t.end_ms)})` : '';
    const spk = s && t && s.speaker_id !== t.speaker_id ? `${s.speaker_id} / ${t.speaker_id}` : String(a.speaker_id);
    rows.push(h('tr', {},
      h('td', { class: 'mono nowrap' }, span, other ? h('span', { class: 'small muted' }, h('br'), other) : null),
      h('td', {}, h('span', { class: `swatch ${speakerClass(a.speaker_id)}`, 'aria-hidden': 'true' }), ' ', spk),
      h('td', { lang: d.sl || null }, s ? s.text : '—'),
      h('td', { lang: d.tl || null }, t ? t.text : '—')));
  }
  const out = [h('h4', {}, 'Scripts')];
  if (!rows.length) out.push(h('p', { class: 'muted' }, d.pending ? 'No script yet: the scripts and speakers are produced when the first run completes.' : 'No script yet.'));
  else {
    out.push(lanes(d));
    out.push(table(`Source and target script side by side (${d.src.length} / ${d.dst.length} segments)`,
      ['Start–end', 'Speaker', `Source text (${d.sl})`, `Target text (${d.tl})`], rows, 'script-table'));
  }
  out.push(h('h4', {}, 'Speakers'));
  out.push(d.speakers.length ? table('Speakers', ['Speaker', 'Style', 'Voice key'], d.speakers.map((s) => h('tr', {},
    h('td', {}, h('span', { class: `swatch ${speakerClass(s.speaker_id)}`, 'aria-hidden': 'true' }), ' ', String(s.speaker_id)),
    h('td', {}, dash(s.style)), h('td', { class: 'mono' }, dash(s.voice_key))))) : h('p', { class: 'muted' }, 'No speakers yet.'));
  if (d.pending) {
    const pr = d.pending;
    out.push(h('h4', {}, 'Pending re-translation'), dl([
      ['Target segments', String(pr.target_script?.length ?? 0)],
      ['Speakers', (pr.target_speakers || []).map((s) => `${s.speaker_id}: ${s.voice_key}`).join(', ') || '—'],
      ['Mixing mode', dash(pr.mixing_mode)], ['TTS volume', dash(pr.tts_volume)],
      ['Fixed timings', yesNo(pr.use_fixed_timings)],
    ]), h('details', {}, h('summary', {}, 'Pending re-translation as JSON'), pre(JSON.stringify(pr, null, 2))));
  }
  return out;
}

// lanes draws source and target segments on one time axis.
function lanes(d) {
  const end = Math.max(d.dur || 0, ...d.src.map((s) => s.end_ms), ...d.dst.map((s) => s.end_ms), 1);
  const lane = (label, segs) => h('div', { class: 'lane' },
    h('span', { class: 'lane-label' }, label),
    h('div', { class: 'lane-track', role: 'img', 'aria-label': `${label}: ${segs.length} segments over ${fmtClip(end)}` },
      segs.map((s) => h('span', {
        class: `bar ${speakerClass(s.speaker_id)}`,
        style: { left: `${(s.start_ms / end) * 100}%`, width: `${Math.max(((s.end_ms - s.start_ms) / end) * 100, 0.2)}%` },
        title: `${fmtClip(s.start_ms)}–${fmtClip(s.end_ms)} speaker ${s.speaker_id}: ${s.text}`,
      }))));
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => h('span', { class: 'tick', style: { left: `${f * 100}%` } }, fmtClip(Math.round(end * f)).replace(/\.\d+$/, '')));
  return h('div', { class: 'lanes' },
    lane(`Source (${d.sl})`, d.src), lane(`Target (${d.tl})`, d.dst),
    h('div', { class: 'lane' }, h('span', { class: 'lane-label' }), h('div', { class: 'lane-ticks', 'aria-hidden': 'true' }, ticks)));
}

// ---- Studio --------------------------------------------------------------

function renderStudio(d) {
  // The company picker follows the companies.
  const sel = $('studio-company');
  const comps = d.companies || [];
  update(sel, comps.map((c) => [c.id, c.name]), (cs) => [
    h('option', { value: '' }, 'All companies'),
    cs.map(([id, name]) => h('option', { value: id }, `${name} (${id})`))]);
  if (sel.value !== ui.studioCompany) sel.value = comps.some((c) => c.id === ui.studioCompany) ? ui.studioCompany : '';
  const c = (ui.studioCompany = sel.value);
  const mine = (x) => !c || x.company_id === c;
  const newest = (a, b) => String(b.created_at).localeCompare(String(a.created_at));
  update($('studio-body'), {
    companies: comps, folders: d.folders || [],
    projects: (d.projects || []).filter(mine).sort(newest),
    videos: (d.videos || []).filter(mine).sort(newest),
    artifacts: (d.artifacts || []).filter(mine).sort(newest),
  }, studioTables);
}

function studioTables(d) {
  const company = new Map(d.companies.map((x) => [x.id, x.name]));
  const folder = new Map(d.folders.map((x) => [x.id, x.name]));
  const project = new Map(d.projects.map((x) => [x.id, x.name]));
  const videos = new Map();
  for (const v of d.videos) videos.set(v.project_id, (videos.get(v.project_id) || 0) + 1);
  return [
    h('h3', {}, 'Studio projects'),
    d.projects.length ? table(`Studio projects (${d.projects.length})`, ['Name', 'Company', 'Folder', 'Status', 'Videos', 'Updated'],
      d.projects.map((p) => h('tr', { 'data-studio-project-id': p.id },
        h('td', {}, h('a', { href: `${ROOT}/projects/${encodeURIComponent(p.id)}` }, p.name || p.id), h('br'), h('span', { class: 'mono muted small' }, p.id)),
        h('td', {}, company.get(p.company_id) || p.company_id),
        h('td', {}, p.folder_id ? folder.get(p.folder_id) || p.folder_id : '—'),
        h('td', { class: 'status' }, badge(p.status)),
        h('td', { class: 'num' }, String(videos.get(p.id) || 0)),
        h('td', {}, timeEl(p.updated_at))))) : h('p', { class: 'muted' }, 'No studio project.'),
    h('h3', {}, 'Videos'),
    d.videos.length ? table(`Videos (${d.videos.length})`, ['Name', 'Project', 'Status', 'Processing', 'Languages', 'Duration', 'Due'],
      d.videos.map((v) => h('tr', { 'data-video-id': v.id },
        h('td', {}, v.name || v.id, h('br'), h('span', { class: 'mono muted small' }, v.id)),
        h('td', {}, project.get(v.project_id) || v.project_id),
        h('td', { class: 'status' }, badge(v.status)),
        h('td', {}, dash(v.processing_type)),
        h('td', {}, `${v.src_lang || '?'} → ${(v.dst_langs || []).join(', ') || '?'}`),
        h('td', { class: 'num' }, v.duration_seconds != null ? fmtClip(Math.round(v.duration_seconds * 1000)) : '—'),
        h('td', {}, timeEl(v.due_at))))) : h('p', { class: 'muted' }, 'No video.'),
    h('h3', {}, 'Artifacts'),
    d.artifacts.length ? table(`Artifacts (${d.artifacts.length})`, ['Type', 'Name', 'Status', 'Lifecycle', 'Result'],
      d.artifacts.map((a) => h('tr', { 'data-artifact-id': a.id },
        h('td', {}, a.type),
        h('td', {}, a.name || a.id, h('br'), h('span', { class: 'mono muted small' }, a.id)),
        h('td', { class: 'status' }, badge(a.status)),
        h('td', {}, lifecycle(a)),
        h('td', {}, artifactResult(a))))) : h('p', { class: 'muted' }, 'No artifact yet.'),
  ];
}

const ARTIFACT_STEP = { created: 0, upload_started: 1, upload_completed: 2, upload_failed: 2 };

// lifecycle shows created → upload_started → upload_completed/failed, each
// step reached or planned, with its time.
function lifecycle(a) {
  const at = ARTIFACT_STEP[a.status] ?? 0;
  const last = at === 2 ? a.status : a.result?.known ? (a.result.fail ? 'upload_failed' : 'upload_completed') : 'upload_completed / upload_failed';
  const steps = [['created', a.created_at], ['upload_started', a.start_at], [last, a.done_at]];
  return h('ol', { class: 'lifecycle', 'aria-label': `Lifecycle of ${a.name || a.id}` }, steps.map(([name, t], i) => {
    const done = i <= at;
    return h('li', { class: done ? 'done' : 'planned' },
      h('span', { class: 'step' }, name), ' ',
      isTime(t) ? timeEl(t, done ? '' : 'planned ') : h('span', { class: 'muted' }, done ? '' : 'not scheduled'),
      done ? null : h('span', { class: 'sr-only' }, ' (not reached)'));
  }));
}

function artifactResult(a) {
  const out = [];
  if (a.size != null) out.push(fmtBytes(a.size));
  if (a.duration != null) out.push(fmtClip(Math.round(a.duration * 1000)));
  // Before completion, the planned result (what upload_completed will report).
  const planned = a.status !== 'upload_completed' && a.status !== 'upload_failed' && a.result?.known && !a.result.fail;
  if (planned && a.size == null && a.result.size != null) out.push(`planned ${fmtBytes(a.result.size)}`);
  if (planned && a.duration == null && a.result.duration != null) out.push(fmtClip(Math.round(a.result.duration * 1000)));
  if (a.upload_method) out.push(a.upload_method + (a.source_kind ? ` (${a.source_kind})` : ''));
  return [out.join(' · ') || '—', a.error_message ? h('div', { class: 'error-text' }, a.error_message) : null,
    a.source_url ? h('div', { class: 'small muted break' }, a.source_url) : null];
}

// ---- Request journal -----------------------------------------------------

// Why a request was refused, by status; ERROR_NAMES refines it by error name.
const STATUS_RULES = {
  0: 'No answer: the connection was closed (a drop fault, or the client gave up). The change may or may not have happened; read the resource before retrying.',
  400: 'The request breaks a documented input rule; the message names it.',
  401: 'Missing or unknown API key: send Authorization: Bearer <API key> with a known key.',
  402: 'The account\'s balance or plan does not allow it.',
  403: 'Not allowed for this key or company (the feature is not enabled for the account).',
  404: 'Unknown resource or route (or one that belongs to another account).',
  405: 'This method is not allowed on this path.',
  408: 'The request took too long to arrive.',
  409: 'State conflict: the project is processing, or a request with this Idempotency-Key is still in flight.',
  413: 'The body is larger than the limit.',
  415: 'Wrong Content-Type for this endpoint.',
  416: 'The Range header cannot be satisfied for this file.',
  422: 'Well-formed but refused: an Idempotency-Key reused with a different request, or content that cannot be processed.',
  429: 'Rate limited: wait for Retry-After before retrying.',
};
const ERROR_NAMES = {
  ValidationError: 'The request breaks a documented input rule; the message names it.',
  VideoInfoError: 'The source video cannot be read (URL unreachable or not a video).',
  UnauthorizedError: STATUS_RULES[401], AuthenticationError: STATUS_RULES[401], Unauthorized: STATUS_RULES[401],
  PaymentRequiredError: STATUS_RULES[402],
  ForbiddenError: STATUS_RULES[403],
  ConflictError: STATUS_RULES[409],
  IdempotencyError: 'The Idempotency-Key was already used with a different method, path or body; use a new key.',
  RateLimitError: STATUS_RULES[429],
  MethodNotAllowedError: STATUS_RULES[405],
};

function explain(entry) {
  let body = null;
  try { body = JSON.parse(entry.response_body || ''); } catch { /* not JSON */ }
  const name = typeof body?.error === 'string' && /^[A-Z]\w*$/.test(body.error) ? body.error : '';
  const message = body?.message || (!name && typeof body?.error === 'string' ? body.error : '');
  const s = entry.aborted ? 0 : entry.status;
  // 413/415/416 say more than their error name (413 is a ValidationError).
  let why = [413, 415, 416].includes(s) ? STATUS_RULES[s] : ERROR_NAMES[name] || STATUS_RULES[s];
  if (/authori[sz]ation token|api key/i.test(message) && s === 400) why = STATUS_RULES[401] + ' (The studio interface answers 400 for it.)';
  if (!why && s >= 500) why = 'Server failure (real or injected): the change may or may not have happened; read the resource before retrying.';
  if (!why) why = 'Refused by the simulator; see the message.';
  if (entry.truncated) why = 'The answer was cut short: Content-Length announced the whole body, the client got only the first bytes, then the connection closed. Treat it as a failure and read the resource again.';
  const short = entry.truncated ? 'body cut short, then the connection closed' : s === 0 ? 'connection closed without an answer' : '';
  return { name, message: message || short, why };
}

function actionSummary(a) {
  if (!a) return '?';
  switch (a.type) {
    case 'error': return `error ${a.status}${a.error ? ' ' + a.error : ''}${a.message ? ` “${a.message}”` : ''}`;
    case 'rate_limit': return `rate_limit 429, Retry-After ${a.retry_after_seconds ?? 0} s`;
    case 'latency':
      if (a.latency_ms) return `latency ${a.latency_ms} ms`;
      if (a.distribution === 'uniform') return `latency uniform ${a.min_ms ?? 0}–${a.max_ms} ms`;
      if (a.distribution === 'normal') return `latency normal mean ${a.mean_ms ?? 0} ms, sd ${a.stddev_ms} ms`;
      if (a.distribution === 'lognormal') return `latency lognormal median ${a.median_ms} ms, sigma ${a.sigma}`;
      return 'latency ' + JSON.stringify(a);
    case 'drop': return 'drop the connection';
    case 'truncate': return `truncate after ${a.bytes ?? 0} bytes`;
  }
  return JSON.stringify(a);
}

const refused = (e) => e.aborted || e.truncated || e.status === 0 || e.status >= 400;

function renderJournal(data) {
  const body = $('journal-body');
  const st = data.stats || {};
  const kib = (n) => n == null ? '?' : `${Math.ceil(n / 1024)} KiB`;
  const stats = `${data.requests.length} shown · ${st.stored ?? '?'} stored (${kib(st.bytes)} of ${kib(st.max_bytes)}) · ${st.total ?? '?'} recorded in all` +
    (st.dropped ? ` · ${st.dropped} dropped (oldest first)` : '');
  if ($('journal-stats').textContent !== stats) $('journal-stats').textContent = stats;
  if (!body.querySelector('table')) {
    body._json = null;
    body.replaceChildren(h('div', { class: 'table-wrap', tabindex: 0, role: 'region', 'aria-label': 'Request journal entries' },
      h('table', { class: 'journal-table' },
        h('caption', {}, `Requests, newest first (up to ${JOURNAL_LIMIT})`),
        h('thead', {}, h('tr', {}, ['Seq', 'Sim time', 'Interface', 'Method', 'Path', 'API key', 'Status', 'Duration']
          .map((t) => h('th', { scope: 'col' }, t)))))));
  }
  const tbl = body.querySelector('table');
  const items = data.requests.map((e) => {
    const rule = e.fault ? ui.rules.get(e.fault) : null;
    return { id: 's' + e.seq, data: { e, rule: rule ? { id: rule.id, action: rule.action } : null }, build: journalEntry };
  });
  if (!items.length) items.push({ id: 'empty', data: null, build: () => h('tbody', {}, h('tr', {}, h('td', { colspan: 8, class: 'muted' }, 'No request matches.'))) });
  reconcile(tbl, items);
}

// journalEntry is one <tbody data-seq>: the summary row and, for a refused
// request, a row with a <details> explaining it.
function journalEntry({ e, rule }) {
  const bad = refused(e);
  const shownStatus = e.truncated ? 'truncated' : e.aborted || e.status === 0 ? 'aborted' : String(e.status);
  const row = h('tr', { class: bad ? 'refused' : null },
    h('td', { class: 'num mono' }, String(e.seq)),
    h('td', {}, timeEl(e.sim_time)),
    h('td', {}, e.interface),
    h('td', { class: 'mono' }, e.method),
    h('td', { class: 'mono break' }, e.path, e.query ? h('span', { class: 'muted' }, '?' + e.query) : null),
    h('td', { class: 'mono' }, e.api_key || '—'),
    h('td', { class: 'status' }, badge(shownStatus, toneOf(e.aborted || e.truncated ? 'aborted' : e.status)),
      e.fault ? h('span', { class: 'small' }, ' fault') : null),
    h('td', { class: 'num' }, `${(e.duration_ms ?? 0).toFixed(1)} ms`));
  const tb = h('tbody', { 'data-seq': e.seq, class: bad ? 'entry refused' : 'entry' }, row);
  if (!bad) return tb;
  const { name, message, why } = explain(e);
  const summary = `Why ${shownStatus}${name ? ' ' + name : ''}${message ? `: ${message}` : ''}`;
  tb.append(h('tr', { class: 'entry-more' }, h('td', { colspan: 8 }, h('details', {},
    h('summary', { 'data-fk': 'more' }, summary),
    h('div', { class: 'why' },
      e.fault
        ? h('p', {}, h('strong', {}, `Injected by fault rule ${e.fault}`),
          rule ? `: ${actionSummary(rule.action)}.` : ' (the rule is no longer listed: used up, expired or removed).')
        : h('p', {}, h('strong', {}, 'Rule: '), why),
      e.notes ? h('p', {}, 'Notes: ', [].concat(e.notes).join('; ')) : null,
      e.headers && Object.keys(e.headers).length ? h('p', { class: 'small' }, 'Headers: ',
        Object.entries(e.headers).map(([k, v]) => `${k}: ${v}`).join(' · ')) : null,
      h('div', { class: 'bodies' },
        h('div', {}, h('h5', {}, 'Response body'), e.response_body ? pre(pretty(e.response_body)) : h('p', { class: 'muted' }, 'None (no answer was sent).')),
        h('div', {}, h('h5', {}, `Request body (${e.request_body_size ?? 0} bytes)`),
          e.request_body ? pre(pretty(e.request_body)) : h('p', { class: 'muted' }, 'None.'))))))));
  return tb;
}

function journalPath() {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(ui.journalQuery)) if (v) q.set(k, v);
  q.set('limit', String(JOURNAL_LIMIT));
  return '/requests?' + q;
}

// ---- Conformance report --------------------------------------------------

function renderReport(r) {
  const { generated_at: _, ...rest } = r; // the time alone is no reason to redraw
  update($('report-body'), rest, () => {
    const s = r.summary || {};
    const counts = (obj) => Object.entries(obj || {}).map(([k, v]) => `${k}: ${v}`).join(' · ') || '—';
    return [
      h('h3', {}, `Report for `, h('span', { class: 'mono' }, r.api_key)),
      h('p', { class: 'small muted' }, 'Updated live from the journal while shown.'),
      dl([
        ['Requests', String(s.requests ?? 0)],
        ['Findings', `${s.findings ?? 0} (${s.errors ?? 0} errors, ${s.warnings ?? 0} warnings)`],
        ['By status class', counts(s.by_status_class)],
        ['Journal dropped', String(s.journal_dropped ?? 0)],
      ]),
      Object.keys(s.by_endpoint || {}).length ? table('Requests by endpoint', ['Endpoint', 'Requests'],
        Object.entries(s.by_endpoint).map(([k, v]) => h('tr', {}, h('td', { class: 'mono' }, k), h('td', { class: 'num' }, String(v))))) : null,
      (r.findings || []).length
        ? h('ol', { class: 'findings' }, r.findings.map((f) => h('li', { class: `finding finding-${f.severity}`, 'data-rule': f.rule },
          h('h4', {}, badge(f.severity, f.severity === 'error' ? 'bad' : 'warn'), ' ', f.title, ' ', h('span', { class: 'mono small muted' }, f.rule)),
          h('p', {}, f.detail),
          h('p', {}, h('strong', {}, 'Observed: '), f.observed, ` (count ${f.count})`),
          (f.examples || []).length ? table(`Examples of ${f.rule}`, ['Seq', 'Sim time', 'Method', 'Path', 'Status', 'Excerpt'],
            f.examples.map((x) => h('tr', {},
              h('td', { class: 'num mono' }, String(x.seq)), h('td', {}, timeEl(x.sim_time || x.time)),
              h('td', { class: 'mono' }, x.method), h('td', { class: 'mono break' }, x.path),
              h('td', { class: 'status' }, badge(x.status)), h('td', { class: 'break small' }, dash(x.excerpt))))) : null)))
        : h('p', { class: 'ok-text' }, 'No finding: nothing this client did breaks a checked rule.'),
    ];
  });
}

// ---- Fault rules ---------------------------------------------------------

function renderFaults(data) {
  const rules = data.rules || [];
  for (const r of rules) ui.rules.set(r.id, r);
  const body = $('faults-body');
  if (!rules.length) {
    update(body, 'empty', () => h('p', { class: 'muted' }, 'No fault rule: every request is answered normally.'));
    return;
  }
  if (!body.querySelector('table')) {
    body._json = null;
    body.replaceChildren(table('Fault rules, in evaluation order',
      ['Id', 'Method', 'Path', 'API key', 'Action', 'Probability', 'Remaining', 'Hits', 'Expires', ''], []));
  }
  reconcile(body.querySelector('tbody'), rules.map((r) => ({ id: r.id, data: r, build: faultRow })));
}

function faultRow(r) {
  return h('tr', { 'data-fault-id': r.id },
    h('td', { class: 'mono' }, r.id),
    h('td', { class: 'mono' }, r.method || 'any'),
    h('td', { class: 'mono break' }, r.path || 'any'),
    h('td', { class: 'mono' }, r.api_key || 'any'),
    h('td', {}, actionSummary(r.action)),
    h('td', { class: 'num' }, String(r.probability ?? 1)),
    h('td', { class: 'num' }, r.remaining == null ? 'unlimited' : String(r.remaining)),
    h('td', { class: 'num' }, String(r.hits ?? 0)),
    h('td', {}, r.expires_at ? timeEl(r.expires_at) : 'never'),
    h('td', {}, h('button', { type: 'button', class: 'danger', 'data-fk': 'remove', 'aria-label': `Remove fault ${r.id}`, onclick: () => removeFault(r.id) }, 'Remove')));
}

async function removeFault(id) {
  const row = document.querySelector(`tr[data-fault-id="${CSS.escape(id)}"]`);
  const after = (row?.nextElementSibling || row?.previousElementSibling)?.getAttribute('data-fault-id');
  await act(() => api('DELETE', `/faults/${encodeURIComponent(id)}`), `Removed fault rule ${id}.`);
  // Keep the keyboard user near where they were.
  const target = after && document.querySelector(`tr[data-fault-id="${CSS.escape(after)}"] button`);
  (target || $('fault-form').querySelector('button[type=submit]')).focus();
}

// faultBody reads the add form into the JSON the control API takes; empty
// fields are left out (zero counts as absent there too).
function faultBody(form) {
  const v = (n) => form.elements[n].value.trim();
  const num = (n) => (v(n) === '' ? undefined : Number(v(n)));
  const type = v('type');
  const action = { type };
  if (type === 'error') Object.assign(action, { status: num('status'), error: v('error') || undefined, message: v('message') || undefined });
  if (type === 'rate_limit') action.retry_after_seconds = num('retry_after_seconds');
  if (type === 'latency') action.latency_ms = num('latency_ms');
  if (type === 'truncate') action.bytes = num('bytes');
  return {
    method: v('method') || undefined, path: v('path') || undefined, api_key: v('api_key') || undefined,
    count: num('count') || undefined, probability: num('probability'), ttl_seconds: num('ttl_seconds') || undefined, action,
  };
}

function showActionFields() {
  const type = $('fault-type').value;
  for (const fs of document.querySelectorAll('.action-fields')) {
    const on = fs.dataset.action === type;
    fs.hidden = !on;
    fs.disabled = !on;
  }
}

// ---- Sandboxes -----------------------------------------------------------
//
// The default instance lists its sandboxes (GET /_sim/sandboxes); a sandbox,
// or a dubsim without them, answers 404 and the panel stays hidden until the
// page is reloaded. The list is read with the rest of the page and, while it
// is shown and the tab visible, every SANDBOX_MS: a sandbox's use does not
// change the default instance's event stream.

const SANDBOX_MS = 15000;

// sandboxesRead applies the answer of GET /_sim/sandboxes (a settled
// promise); it returns the error to report, if any.
function sandboxesRead(r) {
  if (r.status === 'rejected' && r.reason.status === 404) ui.sandboxes = false;
  else if (r.status === 'fulfilled') ui.sandboxes = true;
  $('sandboxes').hidden = !ui.sandboxes;
  $('nav-sandboxes').hidden = !ui.sandboxes;
  if (!ui.sandboxes) return '';
  if (r.status === 'rejected') { showError($('sandboxes-error'), r.reason.message); return r.reason.message; }
  showError($('sandboxes-error'), '');
  renderSandboxes(r.value);
  return '';
}

function renderSandboxes(data) {
  const list = data.sandboxes || [];
  const sum = `${data.total ?? list.length} of at most ${data.max ?? '?'} sandboxes; one unused for ${data.idle_expiry || '?'} is deleted.`;
  if ($('sandboxes-summary').textContent !== sum) $('sandboxes-summary').textContent = sum;
  const body = $('sandboxes-body');
  if (!list.length) {
    update(body, 'empty', () => h('p', { class: 'muted' }, 'No sandbox. POST /_sim/sandboxes creates one.'));
    return;
  }
  if (!body.querySelector('table')) {
    body._json = null;
    body.replaceChildren(table('Sandboxes, oldest first', ['Id', 'Created', 'Last use', 'Clock', 'API keys', ''], []));
  }
  reconcile(body.querySelector('tbody'), list.map((s) => ({ id: s.id, data: s, build: sandboxRow })));
}

function sandboxRow(s) {
  const c = s.clock || {};
  const keys = Object.values(s.api_keys || {});
  return h('tr', { 'data-sandbox-id': s.id },
    h('td', { class: 'mono' }, s.id),
    h('td', {}, timeEl(s.created_at)),
    h('td', {}, timeEl(s.last_used_at)),
    h('td', {}, timeEl(c.now), ' ', badge(c.frozen ? 'frozen' : 'running'), c.frozen ? null : ` ×${c.time_scale ?? 1}`),
    h('td', { class: 'mono small' }, keys.length ? h('details', {}, h('summary', {}, `${keys.length} keys`), keys.map((k) => h('div', {}, k))) : '—'),
    h('td', {},
      h('a', { href: `${ROOT}/sbx/${encodeURIComponent(s.id)}/_sim/ui/`, 'data-fk': 'open', 'aria-label': `Open the dashboard of sandbox ${s.id}` }, 'Open'), ' ',
      h('button', { type: 'button', class: 'danger', 'data-fk': 'delete', 'aria-label': `Delete sandbox ${s.id}`, onclick: () => deleteSandbox(s.id) }, 'Delete')));
}

function deleteSandbox(id) {
  if (!confirm(`Delete sandbox ${id}? Its projects, accounts, journal and clock go; its keys stop working.`)) return;
  act(() => api('DELETE', `/sandboxes/${encodeURIComponent(id)}`), `Deleted sandbox ${id}.`);
}

setInterval(() => {
  if (!ui.sandboxes || document.visibilityState !== 'visible' || running) return;
  api('GET', '/sandboxes').then((value) => ({ status: 'fulfilled', value }), (reason) => ({ status: 'rejected', reason })).then(sandboxesRead);
}, SANDBOX_MS);

// ---- Refresh loop --------------------------------------------------------

let running = null;
let again = false;

// refreshAll reads every source in parallel, then renders each section.
async function refreshAll() {
  const sel = ui.selected;
  const [state, faults, studio, journal, detail, report, sandboxes] = await Promise.allSettled([
    api('GET', statePath()),
    api('GET', '/faults'),
    api('GET', '/studio'),
    ui.live ? api('GET', journalPath()) : null,
    sel ? api('GET', `/projects/${encodeURIComponent(sel)}`) : null,
    ui.reportKey ? api('GET', `/report?api_key=${encodeURIComponent(ui.reportKey)}`) : null,
    ui.sandboxes === false ? null : api('GET', '/sandboxes'),
  ]);
  const errs = {};
  const fail = (src, r, el) => { errs[src] = r.reason.message; showError(el, r.reason.message); };

  if (state.status === 'fulfilled') {
    ui.state = state.value;
    ui.next = ui.state.next_cursor || '';
    if (!(ui.state.projects || []).length && ui.cursors.length > 1) {
      // The page emptied (a reset, say): back to the first.
      ui.cursors = [''];
      return refreshAll();
    }
    renderPager();
    showError($('clock-error'), '');
    showError($('projects-error'), '');
    renderClock(ui.state);
    renderAccounts(ui.state.accounts || []);
    renderProjects(ui.state);
  } else fail('State (/_sim/state)', state, $('clock-error'));
  if (state.status === 'rejected') showError($('projects-error'), state.reason.message);

  if (faults.status === 'fulfilled') { showError($('faults-error'), ''); renderFaults(faults.value); } else fail('Fault rules', faults, $('faults-error'));
  if (studio.status === 'fulfilled') { showError($('studio-error'), ''); renderStudio(studio.value); } else fail('Studio (/_sim/studio)', studio, $('studio-error'));
  if (ui.live) {
    if (journal.status === 'fulfilled') { showError($('journal-error'), ''); renderJournal(journal.value); } else fail('Request journal', journal, $('journal-error'));
  }
  if (sel && sel === ui.selected) {
    if (detail.status === 'fulfilled') ui.detail = { id: sel, data: detail.value };
    else if (detail.reason.status === 404 && /not found/i.test(detail.reason.message) && !/route/i.test(detail.reason.message)) ui.detail = { id: sel, gone: true };
    else ui.detail = { id: sel, error: detail.reason.message };
  }
  if (state.status === 'fulfilled' || !ui.selected) renderDetail(state.status === 'fulfilled' ? ui.state : null);
  if (ui.reportKey) {
    if (report.status === 'fulfilled') { showError($('report-error'), ''); renderReport(report.value); } else fail('Conformance report', report, $('report-error'));
  }
  if (ui.sandboxes !== false) {
    const err = sandboxesRead(sandboxes);
    if (err) errs.Sandboxes = err;
  }
  const streamErr = ui.errors['Event stream (/_sim/events)'];
  ui.errors = streamErr ? { ...errs, 'Event stream (/_sim/events)': streamErr } : errs;
  showErrors();
}

// tick runs one refresh (never two at once; a change seen meanwhile runs
// one more after it).
async function tick() {
  if (running) { again = true; return running; }
  running = refreshAll().catch((e) => say(`Dashboard error: ${e.message}`));
  await running;
  running = null;
  if (again) { again = false; return tick(); }
  return null;
}

// refreshNow refreshes at once (after the running one, if any).
function refreshNow() {
  if (running) { again = true; return running.then(() => (running ? running : null)); }
  return tick();
}

// ---- Event stream --------------------------------------------------------
//
// GET /_sim/events sends "changed" (with the clock) when anything a reader
// could see changed, and a heartbeat; the dashboard reads its sections only
// then. It is read with fetch, not EventSource, so that the control token
// goes in the Authorization header, never in an address (fidelity HA2).

let streamAbort = null;

function onEvent(name, data) {
  let d = null;
  try { d = JSON.parse(data); } catch { return; }
  if (d.now) ui.clock = { now: ms(d.now), scale: d.time_scale ?? ui.clock?.scale ?? 1, frozen: d.frozen ?? ui.clock?.frozen ?? true, at: performance.now() };
  if (name === 'changed') refreshNow();
}

async function stream() {
  if (streamAbort) return;
  const ctl = new AbortController();
  streamAbort = ctl;
  let retried = false;
  while (!ctl.signal.aborted) {
    const sent = controlToken();
    try {
      const res = await fetch(BASE + '/events', { headers: controlHeaders(), cache: 'no-store', signal: ctl.signal });
      if (res.status === 401 && !retried) {
        retried = true;
        const now = controlToken();
        if ((now && now !== sent) || await askToken(Boolean(sent))) continue;
      }
      if (!res.ok) {
        let data = null;
        try { data = await res.json(); } catch { /* not JSON */ }
        const msg = res.status === 401 && data?.error === 'UnauthorizedError' ? tokenRefusal(sent) : (data?.message || `${res.status} ${res.statusText}`.trim());
        ui.errors['Event stream (/_sim/events)'] = msg;
        showErrors();
        if (res.status === 401) { refreshNow(); break; } // the sections say why too
      } else {
        delete ui.errors['Event stream (/_sim/events)'];
        showErrors();
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let buf = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += value.replace(/\r\n?/g, '\n');
          let i;
          while ((i = buf.indexOf('\n\n')) >= 0) {
            const block = buf.slice(0, i);
            buf = buf.slice(i + 2);
            let name = 'message', data = '';
            for (const line of block.split('\n')) {
              if (line.startsWith('event:')) name = line.slice(6).trim();
              else if (line.startsWith('data:')) data += line.slice(5).trim();
            }
            if (data) onEvent(name, data);
          }
        }
      }
    } catch (e) {
      if (ctl.signal.aborted) break;
      ui.errors['Event stream (/_sim/events)'] = `Cannot reach the simulator (${e.message})`;
      showErrors();
    }
    if (ctl.signal.aborted) break;
    await new Promise((r) => setTimeout(r, RECONNECT_MS));
  }
  if (streamAbort === ctl) streamAbort = null;
}

function showErrors() {
  update($('status-errors'), ui.errors, (e) => Object.entries(e).map(([k, m]) => h('li', { class: 'error-text' }, `${k}: ${m}`)));
}

// The clock moves on the page between events (no request): simulated now
// of the last event plus the real time since, times the scale.
setInterval(() => {
  const c = ui.clock;
  if (!c || c.frozen || document.visibilityState !== 'visible') return;
  const now = new Date(c.now + (performance.now() - c.at) * c.scale).toISOString();
  const el = $('clock-now');
  el.textContent = now;
  el.setAttribute('datetime', now);
}, 1000);

document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible') stream();
  else if (streamAbort) { streamAbort.abort(); streamAbort = null; }
});

// act runs a button action, reports its outcome and refreshes.
async function act(fn, ok) {
  try {
    const res = await fn();
    say(typeof ok === 'function' ? ok(res) : ok);
    return res;
  } catch (e) {
    say(e.message);
    return null;
  } finally {
    await refreshNow();
  }
}

// ---- Actions -------------------------------------------------------------

// formValues reads a form's named fields: trimmed text, checkbox booleans.
function formValues(form) {
  const out = {};
  for (const el of form.elements) {
    if (!el.name) continue;
    out[el.name] = el.type === 'checkbox' ? el.checked : el.value.trim();
  }
  return out;
}

function resetAction(ev) {
  ev.preventDefault();
  const key = $('reset-key').value;
  if (!key && !confirm('Reset everything? Projects, accounts (fixture ones restored), studio records, uploads and forced outcomes go; the clock carries on.')) return;
  act(() => api('POST', '/reset', key ? { api_key: key } : {}), key ? `Reset account ${key}.` : 'Reset everything.');
}

function accountAction(ev) {
  ev.preventDefault();
  const v = formValues(ev.currentTarget);
  const body = { plan: v.plan };
  if (v.api_key) body.api_key = v.api_key;
  if (v.name) body.name = v.name;
  if (v.balance_minutes !== '') body.balance_minutes = Number(v.balance_minutes);
  act(() => api('POST', '/accounts', body), (r) => `Created account ${r.api_key} (${r.plan}, ${r.balance_minutes} min).`);
}

function outcomeAction(ev) {
  ev.preventDefault();
  const v = formValues(ev.currentTarget);
  const body = { outcome: v.outcome, now: v.now };
  if (v.outcome === 'error' && v.error_message) body.error_message = v.error_message;
  const path = `/${v.resource === 'artifact' ? 'artifacts' : 'projects'}/${encodeURIComponent(v.id)}/outcome`;
  act(() => api('POST', path, body), `Forced ${v.resource} ${v.id} to ${v.outcome}${v.now ? ' now' : ' at its due time'}.`);
}

function videoAction(ev) {
  ev.preventDefault();
  const v = formValues(ev.currentTarget);
  const body = { status: v.status };
  if (v.auto) body.auto = true;
  act(() => api('POST', `/videos/${encodeURIComponent(v.id)}/status`, body), `Video ${v.id} is now ${v.status}.`);
}

async function verifyAction(ev) {
  ev.preventDefault();
  const v = formValues(ev.currentTarget);
  const m = {};
  for (const k of ['method', 'path', 'api_key', 'body_contains']) if (v[k]) m[k] = v[k];
  if (v.status !== '') m.status = Number(v.status);
  m[v.kind] = Number(v.n || 0);
  const box = $('verify-result');
  try {
    const r = await api('POST', '/requests/verify', m);
    update(box, r, () => [
      h('p', { class: r.ok ? 'ok-text' : 'error-text', 'data-verify-ok': String(r.ok) },
        `${r.ok ? 'Passed' : 'Failed'}: ${r.matched} matching request${r.matched === 1 ? '' : 's'}, expected ${r.expected}.`),
      (r.near_misses || []).length ? h('ul', {}, r.near_misses.map((n) => h('li', { class: 'small' },
        `#${n.entry?.seq ?? n.seq ?? '?'} ${n.entry?.method ?? ''} ${n.entry?.path ?? ''}: ${n.reason ?? ''}`))) : null,
    ]);
    say(`Verify ${r.ok ? 'passed' : 'failed'}: ${r.matched} matched, expected ${r.expected}.`);
  } catch (e) {
    update(box, e.message, (msg) => h('p', { class: 'error-text' }, msg));
    say(`Verify refused: ${e.message}`);
  }
}

// ---- Journal export ------------------------------------------------------

// harOf builds a HAR 1.2 log from journal entries (oldest first). The
// journal keeps what HAR needs only in part (fidelity ED3): headers of
// interest, bodies up to its max_body, response bodies of refusals only,
// no response headers but Idempotent-Replayed and Retry-After.
function harOf(entries, origin) {
  const RESPONSE_HEADERS = ['Idempotent-Replayed', 'Retry-After'];
  const hdrs = (obj, keep) => Object.entries(obj || {}).filter(([k]) => keep(k)).map(([name, value]) => ({ name, value }));
  return {
    log: {
      version: '1.2',
      creator: { name: 'dubsim dashboard', version: '1' },
      comment: 'Built from the dubsim request journal: headers of interest only, bodies clipped to the journal\'s max_body, response bodies only for status >= 400.',
      entries: entries.map((e) => {
        const url = origin + e.path + (e.query ? '?' + e.query : '');
        const reqHeaders = hdrs(e.headers, (k) => !RESPONSE_HEADERS.includes(k));
        if (e.api_key) reqHeaders.push({ name: 'Authorization', value: `Bearer ${e.api_key}` });
        const ct = e.headers?.['Content-Type'] || '';
        const req = {
          method: e.method, url, httpVersion: 'HTTP/1.1', cookies: [], headers: reqHeaders,
          queryString: [...new URLSearchParams(e.query || '')].map(([name, value]) => ({ name, value })),
          headersSize: -1, bodySize: e.request_body_size ?? -1,
        };
        if (e.request_body) req.postData = { mimeType: ct, text: e.request_body };
        const res = {
          status: e.status, statusText: '', httpVersion: 'HTTP/1.1', cookies: [],
          headers: hdrs(e.headers, (k) => RESPONSE_HEADERS.includes(k)),
          content: { size: e.response_bytes ?? 0, mimeType: 'application/json', ...(e.response_body ? { text: e.response_body } : {}) },
          redirectURL: '', headersSize: -1, bodySize: e.response_bytes ?? -1,
        };
        const out = {
          startedDateTime: e.time, time: e.duration_ms ?? 0, request: req, response: res, cache: {},
          timings: { send: 0, wait: e.duration_ms ?? 0, receive: 0 },
          _seq: e.seq, _interface: e.interface,
        };
        if (e.sim_time) out._simTime = e.sim_time;
        if (e.fault) out._fault = e.fault;
        if (e.aborted) out._aborted = true;
        if (e.truncated) out._truncated = true;
        if (e.request_body_truncated) out._requestBodyTruncated = true;
        if (e.response_body_truncated) out._responseBodyTruncated = true;
        return out;
      }),
    },
  };
}

function download(name, text, type) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = h('a', { href: url, download: name, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
}

async function exportJournal(format) {
  try {
    const data = await api('GET', '/requests?limit=0');
    const entries = [...(data.requests || [])].reverse();
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    if (format === 'har') download(`dubsim-journal-${stamp}.har`, JSON.stringify(harOf(entries, location.origin + ROOT), null, 2), 'application/json');
    else download(`dubsim-journal-${stamp}.json`, JSON.stringify({ ...data, requests: entries }, null, 2), 'application/json');
    say(`Exported ${entries.length} journal entries as ${format.toUpperCase()}.`);
  } catch (e) {
    say(`Export failed: ${e.message}`);
  }
}

// ---- Wiring --------------------------------------------------------------

function wire() {
  $('reset-form').addEventListener('submit', resetAction);
  $('account-form').addEventListener('submit', accountAction);
  $('outcome-form').addEventListener('submit', outcomeAction);
  $('video-form').addEventListener('submit', videoAction);
  $('verify-form').addEventListener('submit', verifyAction);
  $('export-har').addEventListener('click', () => exportJournal('har'));
  $('export-json').addEventListener('click', () => exportJournal('json'));
  $('projects-next').addEventListener('click', () => {
    if (!ui.next) return;
    ui.cursors.push(ui.next);
    refreshNow().then(() => say(`Platform projects, page ${ui.cursors.length}.`));
  });
  $('projects-prev').addEventListener('click', () => {
    if (ui.cursors.length <= 1) return;
    ui.cursors.pop();
    refreshNow().then(() => say(`Platform projects, page ${ui.cursors.length}.`));
  });
  for (const b of document.querySelectorAll('[data-advance]')) {
    const s = Number(b.dataset.advance);
    b.addEventListener('click', () => act(() => api('POST', '/clock/advance', { seconds: s }),
      (r) => `Advanced ${fmtDuration(s)}; simulated now ${r.now}.`));
  }
  $('advance-next').addEventListener('click', () => act(() => api('POST', '/clock/advance', { next_due: true }), (r) => {
    const t = r.transition;
    return t ? `Advanced to ${t.due_at}: ${t.resource} ${t.id} went from ${t.from} to ${t.to}.` : `Simulated now ${r.now}.`;
  }));
  $('clock-freeze').addEventListener('click', () => act(() => api('POST', '/clock/freeze'), (r) => `Clock frozen at ${r.now}.`));
  $('clock-resume').addEventListener('click', () => act(() => api('POST', '/clock/resume'), (r) => `Clock running at scale ${r.time_scale}.`));
  $('scale-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const raw = $('scale-input').value.trim();
    if (raw === '') { say('Enter a time scale, such as 60 (one real second is a simulated minute).'); return; }
    act(() => api('POST', '/clock/scale', { time_scale: Number(raw) }), (r) => `Time scale set to ${r.time_scale}.`);
  });

  // Journal filter: applied on submit; Live pauses this section only.
  $('journal-filter').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const f = ev.currentTarget.elements;
    ui.journalQuery = { method: f.method.value, path: f.path.value.trim(), status: f.status.value.trim(), key: f.key.value.trim() };
    if (!ui.live) { ui.live = true; f.live.checked = true; }
    say('Journal filter applied.');
    refreshNow();
  });
  $('journal-live').addEventListener('change', (ev) => {
    ui.live = ev.currentTarget.checked;
    say(ui.live ? 'Journal updates live.' : 'Journal paused.');
    if (ui.live) refreshNow();
  });
  $('journal-clear').addEventListener('click', () => {
    if (!confirm('Empty the request journal? Sequence ids carry on.')) return;
    act(() => api('DELETE', '/requests'), 'Journal cleared.');
  });

  $('report-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    ui.reportKey = $('report-key').value;
    if (!ui.reportKey) { say('No API key to report on.'); return; }
    $('report-body')._json = null;
    say(`Report for ${ui.reportKey}.`);
    refreshNow();
  });

  $('studio-filter').addEventListener('submit', (ev) => ev.preventDefault());
  $('studio-company').addEventListener('change', (ev) => {
    ui.studioCompany = ev.currentTarget.value;
    refreshNow();
  });

  $('fault-type').addEventListener('change', showActionFields);
  showActionFields();
  $('fault-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const err = $('fault-form-error');
    showError(err, '');
    try {
      const r = await api('POST', '/faults', faultBody(ev.currentTarget));
      say(`Added fault rule ${r.id}: ${actionSummary(r.action)}.`);
    } catch (e) {
      showError(err, e.message);
      say(`Fault rule refused: ${e.message}`);
    }
    refreshNow();
  });
}

wire();
tick();
stream();
