// The Reasonix browser page: a frontend of `reasonix serve` (the HTTP API
// in SERVE-API). It observes a session through its snapshot and event
// stream and answers with commands; all state lives in the fold (fold.js),
// and this module only draws it and sends what the user does.

import { renderMarkdown } from './markdown.js';
import { newState, fold, historyCutoff, toolSubject, cut } from './fold.js';
import { formFields, formContent } from './form.js';

const $ = (id) => document.getElementById(id);

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k === 'text') el.textContent = v;
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) if (c !== null && c !== undefined) el.append(c);
  return el;
}

class HTTPError extends Error {
  constructor(status, message, retryAfter) {
    super(message);
    this.status = status;
    this.retryAfter = retryAfter;
  }
}

// api makes one request with a deadline (the server's own is 30 s, so
// this one only catches a server that is gone); a 401 sends the page back
// to the login form.
async function api(method, path, body) {
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), 45000);
  const opt = { method, headers: { Accept: 'application/json' }, credentials: 'same-origin', signal: ctl.signal };
  if (body !== undefined) {
    opt.headers['Content-Type'] = 'application/json';
    opt.body = JSON.stringify(body);
  }
  try {
    const r = await fetch(path, opt);
    const text = await r.text();
    let data = {};
    try {
      data = text ? JSON.parse(text) : {};
    } catch {
      data = { error: text };
    }
    if (!r.ok) {
      if (r.status === 401 && !path.startsWith('/api/login')) showLogin();
      throw new HTTPError(r.status, data.error || r.status + ' ' + r.statusText, r.headers.get('Retry-After'));
    }
    return data;
  } catch (e) {
    if (e.name === 'AbortError') throw new HTTPError(0, 'the server did not answer in time');
    throw e;
  } finally {
    clearTimeout(timer);
  }
}

const page = {
  auth: { mode: 'none', authenticated: true },
  sessions: [],
  id: '', // the open session
  st: newState(),
  es: null,
  gen: 0, // bumps on every open, so late answers for an old session are dropped
  history: [], // /messages of the open session
  liveFrom: undefined,
  fullHistory: false, // after a lag: every message is history
  shownCutoff: -1,
  els: new Map(), // item id -> element
  rows: new Map(), // task id -> <tr>
  drawQueued: false,
  retry: 0,
  lags: 0, // rebuilds after a lagged event, shown as data-rebuilds on the log
  taskShown: '', // the fleet task whose detail is shown
  sent: [], // prompts this page sent, to show whole what turn_started shortens
  prompts: [], // the workspace's prompt history, oldest first, for ↑/↓
  recall: -1, // the entry ↑ shows, -1 for none
  draft: '', // what was in the box before ↑
  stick: true, // the log follows new output (the user has not scrolled up)
  seenSize: '', // the log's scroll and client height when last scrolled by the page
  opening: false, // the next draw of an opened session goes to its end
  commands: [], // the / menu's commands (GET /api/commands)
  commandsSeq: 0, // the latest loadCommands
  menu: { kind: '', items: [], sel: 0, start: 0, seq: 0 }, // the open / or @ menu
};

// sentText is the prompt this page sent that turn_started's one-line,
// shortened form stands for, taken off the list; else the event's text.
function sentText(shown) {
  const head = shown.endsWith('…') ? shown.slice(0, -1) : shown;
  const i = page.sent.findIndex((t) => {
    const one = t.split(/\s+/).filter(Boolean).join(' ');
    return one === shown || (head !== shown && one.startsWith(head));
  });
  if (i < 0) return shown;
  return page.sent.splice(i, 1)[0];
}

// ---- login ----------------------------------------------------------------

function showLogin() {
  closeStream();
  // Signing in again reopens the session from the address.
  page.gen++;
  page.id = '';
  $('boot').hidden = true;
  $('app').hidden = true;
  $('login').hidden = false;
  const pw = page.auth.mode === 'password';
  $('login-label').textContent = pw ? 'Password' : 'Access token';
  $('login-input').value = '';
  $('login-input').focus();
}

$('login-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const err = $('login-error');
  err.hidden = true;
  const value = $('login-input').value;
  const body = page.auth.mode === 'password' ? { password: value } : { token: value };
  try {
    await api('POST', '/api/login', body);
    await boot();
  } catch (x) {
    err.textContent = x.status === 429 ? 'Too many attempts; try again in ' + (x.retryAfter || 'a few') + ' seconds.' : x.status === 401 ? 'That ' + (page.auth.mode === 'password' ? 'password' : 'token') + ' was not accepted.' : x.message;
    err.hidden = false;
  }
});

$('logout').addEventListener('click', async () => {
  try {
    await api('POST', '/api/logout');
  } catch {
    // Signed out either way once the cookie is gone or refused.
  }
  page.auth.authenticated = false;
  showLogin();
});

// ---- sessions ---------------------------------------------------------------

async function loadSessions() {
  try {
    const data = await api('GET', '/api/sessions');
    page.sessions = data.sessions || [];
  } catch (e) {
    if (e.status === 401) return;
    page.sessions = [];
  }
  drawSessions();
  $('session-list').dataset.loaded = 'true';
  if (page.id) drawStatus();
}

function drawSessions() {
  const ul = $('session-list');
  ul.replaceChildren();
  if (!page.sessions.length) ul.append(h('li', { class: 'meta', text: 'No sessions yet.' }));
  for (const s of page.sessions) {
    const title = s.title || s.id;
    const li = h('li', { 'data-testid': 'session-item', 'data-id': s.id, 'data-live': s.live ? 'true' : 'false', class: s.id === page.id ? 'current' : '', tabindex: '0', role: 'button', 'aria-label': (s.live ? 'Open ' : 'Resume ') + title },
      h('span', { class: 's-title' }, h('span', { class: 'dot' + (s.running ? ' running' : s.live ? ' live' : '') }), cut(title, 60)),
      h('span', { class: 's-meta', text: (s.live ? 'live' : 'saved') + (s.updated ? ' · ' + when(s.updated) : '') }));
    if (s.live) li.append(h('button', { type: 'button', 'data-testid': 'close-session', 'aria-label': 'Close ' + title, text: 'Close', onclick: (e) => { e.stopPropagation(); closeSession(s.id); } }));
    else li.append(h('button', { type: 'button', 'data-testid': 'resume-session', 'aria-label': 'Resume ' + title, text: 'Resume', onclick: (e) => { e.stopPropagation(); resume(s.id); } }));
    const go = () => (s.live ? open(s.id) : resume(s.id));
    li.addEventListener('click', go);
    li.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' || e.key === ' ') {
        e.preventDefault();
        go();
      }
    });
    ul.append(li);
  }
}

function when(t) {
  const d = new Date(t);
  if (isNaN(d)) return '';
  const today = new Date().toDateString() === d.toDateString();
  return today ? d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }) : d.toLocaleDateString();
}

// startSession opens a new session in the served workspace and waits
// until the page shows it: the landing page's first message needs one.
async function startSession() {
  try {
    const data = await api('POST', '/api/sessions', {});
    await loadSessions();
    await open(data.id);
    return true;
  } catch (e) {
    flash('Could not start a session: ' + e.message);
    return false;
  }
}

$('new-session').addEventListener('click', () => startSession());

// setPlan switches plan mode as the chat's /plan does: the session reopens
// in (or out of) plan mode with its conversation and posture; with no
// session open, a new one starts in it.
async function setPlan(on) {
  try {
    const data = await api('POST', '/api/sessions', page.id ? { resume: page.id, plan: on } : { plan: on });
    note(on ? 'plan mode: the agent researches with read-only tools and presents a plan; nothing changes until you approve it'
      : 'plan mode off: the agent may change things as the posture allows');
    if (!page.id) await loadSessions();
    await open(data.id || page.id);
  } catch (e) {
    flash('Could not switch plan mode: ' + e.message);
  }
}

$('plan').addEventListener('click', () => setPlan(!page.st.plan));

async function resume(id) {
  try {
    const data = await api('POST', '/api/sessions', { resume: id });
    await loadSessions();
    open(data.id || id);
  } catch (e) {
    flash('Could not resume ' + id + ': ' + e.message);
  }
}

async function closeSession(id) {
  try {
    await api('DELETE', '/api/sessions/' + encodeURIComponent(id));
  } catch (e) {
    flash('Could not close ' + id + ': ' + e.message);
  }
  if (id === page.id) {
    closeStream();
    page.st.closed = true;
    page.st.changed.add('status');
    draw();
  }
  loadSessions();
}

// flash shows a message from the page itself (not from the session). It
// lives outside the chat, so rebuilding the chat does not lose it; the
// newest few stay until dismissed.
function flash(text) {
  const box = $('flash');
  const el = h('div', { class: 'error', 'data-testid': 'page-error', role: 'alert' }, text + ' ',
    h('button', { type: 'button', class: 'link', 'aria-label': 'Dismiss', text: 'dismiss', onclick: () => el.remove() }));
  box.append(el);
  while (box.children.length > 3) box.firstChild.remove();
}

// ---- opening a session -----------------------------------------------------------

function closeStream() {
  if (page.es) page.es.close();
  page.es = null;
}

function resetView() {
  page.st = newState();
  page.els.clear();
  page.rows.clear();
  page.taskShown = '';
  page.history = [];
  page.liveFrom = undefined;
  page.shownCutoff = -1;
  $('items').replaceChildren();
  $('history').replaceChildren();
  $('fleet-rows').replaceChildren();
  $('approvals').replaceChildren();
  $('elicitations').replaceChildren();
}

// open shows session id: its info and snapshot, the transcript for what no
// event replays, then the event stream from the start of the bus's history.
async function open(id, { afterLag = false } = {}) {
  const gen = ++page.gen;
  closeStream();
  resetView();
  page.id = id;
  page.stick = true;
  page.fullHistory = afterLag;
  loadCommands();
  closePanes();
  page.st.rebuilt = afterLag;
  if (location.hash !== '#s=' + encodeURIComponent(id)) history.replaceState(null, '', '#s=' + encodeURIComponent(id));
  $('empty').hidden = true;
  drawSessions();
  try {
    const info = await api('GET', '/api/sessions/' + encodeURIComponent(id));
    if (gen !== page.gen) return;
    if (info.live === false) {
      // A saved session: open means resume it.
      resume(id);
      return;
    }
    page.st.info = { model: info.model || '', cwd: info.cwd || '', effort: info.effort || '' };
    if (info.posture) page.st.posture = info.posture;
    page.st.plan = !!info.plan;
    if (info.snapshot) fold(page.st, { ...info.snapshot, type: 'snapshot' });
  } catch (e) {
    if (gen !== page.gen) return;
    if (e.status === 404) {
      page.id = '';
      $('empty').hidden = false;
      flash('Session ' + id + ' is not open here.');
      return;
    }
    flash('Could not load the session: ' + e.message);
  }
  try {
    const m = await api('GET', '/api/sessions/' + encodeURIComponent(id) + '/messages');
    if (gen !== page.gen) return;
    page.history = m.messages || [];
    page.liveFrom = typeof m.live_from === 'number' ? m.live_from : undefined;
  } catch (e) {
    if (gen !== page.gen) return;
    page.history = [];
  }
  connect(gen, afterLag ? null : 0);
  page.st.changed.add('status');
  page.opening = true;
  draw();
}

// connect opens the event stream. since null asks only for what follows the
// snapshot; a reconnect by EventSource itself sends Last-Event-ID instead.
function connect(gen, since) {
  const url = '/api/sessions/' + encodeURIComponent(page.id) + '/events' + (since === null ? '' : '?since=' + since);
  const es = new EventSource(url);
  page.es = es;
  es.onopen = () => {
    page.retry = 0;
  };
  es.onmessage = (m) => {
    if (gen !== page.gen) return;
    let ev;
    try {
      ev = JSON.parse(m.data);
    } catch {
      return;
    }
    if (ev.type === 'lagged') {
      // The bus no longer reaches back far enough: rebuild from the
      // snapshot and the transcript, then follow what comes after.
      page.lags++;
      $('log').dataset.rebuilds = String(page.lags);
      open(page.id, { afterLag: true });
      return;
    }
    fold(page.st, ev);
    if (ev.type === 'session_closed') {
      closeStream();
      loadSessions();
    } else if (ev.type === 'turn_done' && !ev.task) {
      loadSessions();
    }
    draw();
  };
  es.onerror = () => {
    if (gen !== page.gen || es.readyState !== EventSource.CLOSED) return;
    // The server refused the stream (401, 404, 5xx) or the browser gave
    // up: find out why before trying again from the last event folded.
    page.es = null;
    recover(gen);
  };
}

async function recover(gen) {
  try {
    const a = await api('GET', '/api/auth');
    if (!a.authenticated && a.mode !== 'none') {
      page.auth = a;
      showLogin();
      return;
    }
    const info = await api('GET', '/api/sessions/' + encodeURIComponent(page.id));
    // A session that is only saved now was closed behind the page's back.
    if (info.live === false) throw new HTTPError(404, 'closed');
  } catch (e) {
    if (gen !== page.gen) return;
    if (e.status === 404) {
      page.st.closed = true;
      page.st.changed.add('status');
      draw();
      loadSessions();
      return;
    }
  }
  if (gen !== page.gen || page.st.closed) return;
  page.retry = Math.min(page.retry + 1, 6);
  setTimeout(() => {
    if (gen === page.gen && !page.es && !page.st.closed) connect(gen, page.st.seq);
  }, 500 * 2 ** page.retry);
}

// ---- commands -----------------------------------------------------------------

async function command(cmd) {
  if (!page.id) throw new Error('no session is open');
  return api('POST', '/api/sessions/' + encodeURIComponent(page.id) + '/commands', cmd);
}

async function send(cmd, what) {
  try {
    await command(cmd);
    return true;
  } catch (e) {
    flash((what || cmd.type) + ' failed: ' + e.message);
    return false;
  }
}

$('composer').addEventListener('submit', async (e) => {
  e.preventDefault();
  const ta = $('prompt');
  const text = ta.value;
  if (!text.trim()) return;
  // Cleared at once, as chats do; a prompt that did not go out comes back
  // unless something new was typed meanwhile.
  ta.value = '';
  page.recall = -1;
  closeMenu();
  remember(text);
  if (await runBuiltin(text)) {
    ta.focus();
    return;
  }
  if (!page.id && !(await startSession())) {
    if (ta.value === '') ta.value = text;
    return;
  }
  // Remembered before it goes out: its turn_started can arrive on the
  // event stream before the POST's answer does.
  page.sent.push(text);
  if (page.sent.length > 20) page.sent.shift();
  if (!(await send({ type: 'prompt', text }, 'Sending'))) {
    const i = page.sent.lastIndexOf(text);
    if (i >= 0) page.sent.splice(i, 1);
    if (ta.value === '') ta.value = text;
  }
  ta.focus();
});

// swallowBreak is set while the Enter that sent a prompt is down: input
// tools that deliver the key's character apart from the key itself (remote
// desktops, automation) would otherwise put a newline into the emptied box.
let swallowBreak = false;
$('prompt').addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    swallowBreak = true;
    $('composer').requestSubmit();
  }
});
// ↑ on the first line recalls the previous prompt of the workspace, ↓ on
// the last goes forward again and back to what was being typed.
$('prompt').addEventListener('keydown', (e) => {
  if (e.isComposing || e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) return;
  const ta = e.target;
  if (e.key === 'ArrowUp' && !ta.value.slice(0, ta.selectionStart).includes('\n')) {
    if (page.recall + 1 >= page.prompts.length) return;
    if (page.recall < 0) page.draft = ta.value;
    page.recall++;
  } else if (e.key === 'ArrowDown' && page.recall >= 0 && !ta.value.slice(ta.selectionEnd).includes('\n')) {
    page.recall--;
  } else {
    return;
  }
  e.preventDefault();
  ta.value = page.recall < 0 ? page.draft : page.prompts[page.prompts.length - 1 - page.recall];
  ta.setSelectionRange(ta.value.length, ta.value.length);
});
$('prompt').addEventListener('input', () => {
  page.recall = -1;
});

// ---- the / and @ menus -------------------------------------------------------

// loadCommands reads the / menu: the built-in and custom commands, and the
// open session's MCP prompts (read again when its servers change). A
// slower, older answer never replaces a newer one.
async function loadCommands() {
  const seq = ++page.commandsSeq;
  const q = page.id ? '?session=' + encodeURIComponent(page.id) : '';
  let cmds = [];
  try {
    const data = await api('GET', '/api/commands' + q);
    cmds = data.commands || [];
  } catch {
    // an empty menu; the next load tries again
  }
  if (seq === page.commandsSeq) page.commands = cmds;
}

// note shows a line from the page itself (help, what a command did).
function note(text) {
  const box = $('flash');
  const el = h('div', { class: 'note', 'data-testid': 'page-note', role: 'status' }, text + ' ',
    h('button', { type: 'button', class: 'link', 'aria-label': 'Dismiss', text: 'dismiss', onclick: () => el.remove() }));
  box.append(el);
  while (box.children.length > 3) box.firstChild.remove();
}

// runBuiltin runs a built-in slash command as the chat does, never as text
// for the model; false for anything else (a custom command or an MCP
// prompt goes to the session as a prompt, which expands or runs it).
async function runBuiltin(text) {
  const m = /^\/(\S+)\s*([\s\S]*)$/.exec(text.trim());
  if (!m) return false;
  const [, name, rest] = m;
  const b = page.commands.find((c) => c.kind === 'builtin' && c.name === name);
  if (!b) return false;
  const arg = rest.trim();
  const needSession = async () => page.id || (await startSession());
  switch (name) {
    case 'help':
      note(page.commands.map((c) => '/' + c.name + (c.args ? ' ' + c.args : '') + ' — ' + c.description).join('\n'));
      return true;
    case 'new':
      await startSession();
      return true;
    case 'compact':
      if (await needSession()) send({ type: 'compact' }, 'Compact');
      return true;
    case 'plan':
      if (page.st.plan) note('already in plan mode: the agent presents a plan to approve before it changes anything');
      else await setPlan(true);
      return true;
    case 'posture':
      if (!arg) note('posture: ' + (page.st.posture || 'ask') + ' (ask, auto or yolo)');
      else if (await needSession()) send({ type: 'set_posture', posture: arg }, 'Posture change');
      return true;
    case 'effort':
      if (!arg) note('effort: ' + (page.st.info.effort || "the model's default"));
      else if (await needSession()) send({ type: 'set_effort', effort: arg }, 'Effort change');
      return true;
    case 'goal':
      if (!(await needSession())) return true;
      if (arg === 'clear') send({ type: 'goal_clear' }, 'Clearing the goal');
      else if (arg) send({ type: 'goal', objective: arg }, 'Starting the goal');
      else note('/goal <objective> starts a goal; /goal clear clears it');
      return true;
    case 'mcp':
      if (!$('app').classList.contains('show-side')) togglePane('side');
      $('mcp').scrollIntoView({ block: 'nearest' });
      return true;
    case 'status': {
      const u = page.st.usage;
      note(['session ' + (page.id || 'none'), 'model ' + (page.st.info.model || '—'), 'posture ' + (page.st.posture || 'ask'), page.st.plan ? 'plan mode' : '', u ? 'tokens ' + u.total_tokens : ''].filter(Boolean).join(' · '));
      return true;
    }
    case 'tasks': {
      const bg = [...page.st.tasks.values()].filter((r) => r.background);
      note(bg.length ? bg.map((r) => r.id + (r.name ? ' (' + r.name + ')' : '') + ' ' + (r.state === 'done' ? r.status || 'done' : r.state)).join(' · ') +
        ' — a task\'s detail writes to it' : 'No background tasks.');
      return true;
    }
    default:
      note('/' + name + ' is a command of the chat (reasonix in a terminal); the page does not offer it yet.');
      return true;
  }
}

function closeMenu() {
  page.menu.kind = '';
  page.menu.items = [];
  $('menu').hidden = true;
  $('menu').replaceChildren();
}

function drawMenu() {
  const ul = $('menu');
  const m = page.menu;
  ul.replaceChildren();
  if (!m.kind || !m.items.length) {
    ul.hidden = true;
    return;
  }
  m.items.forEach((it, i) => {
    const li = h('li', { role: 'option', id: 'menu-' + i, 'data-testid': 'menu-item', 'data-value': it.value, 'aria-selected': i === m.sel ? 'true' : 'false' },
      h('span', { class: 'm-name', text: it.label }), h('span', { class: 'm-desc', text: it.detail || '' }));
    li.addEventListener('mousedown', (e) => e.preventDefault()); // keep the focus in the box
    li.addEventListener('click', () => {
      m.sel = i;
      acceptMenu();
    });
    ul.append(li);
  });
  ul.hidden = false;
  $('prompt').setAttribute('aria-activedescendant', 'menu-' + m.sel);
  const cur = ul.children[m.sel];
  if (cur) cur.scrollIntoView({ block: 'nearest' });
}

// refreshMenu opens the / menu for a first word being typed and the @
// menu for a last word that starts with @, as the chat does.
async function refreshMenu() {
  const ta = $('prompt');
  const v = ta.value.slice(0, ta.selectionStart);
  const m = page.menu;
  const seq = ++m.seq;
  if (v.startsWith('/') && !/\s/.test(v) && v === ta.value) {
    const prefix = v.slice(1);
    m.kind = '/';
    m.start = 0;
    m.items = page.commands.filter((c) => c.name.startsWith(prefix)).map((c) => ({ label: '/' + c.name, detail: (c.args ? c.args + ' — ' : '') + c.description, value: '/' + c.name, run: c.kind === 'builtin' && !c.args }));
    m.sel = 0;
    drawMenu();
    return;
  }
  const i = Math.max(v.lastIndexOf(' '), v.lastIndexOf('\n'), v.lastIndexOf('\t'));
  const word = v.slice(i + 1);
  if (!word.startsWith('@') || word.startsWith('@"')) {
    closeMenu();
    return;
  }
  let entries = [];
  try {
    const data = await api('GET', '/api/complete?partial=' + encodeURIComponent(word.slice(1)));
    entries = data.entries || [];
  } catch {
    entries = [];
  }
  if (seq !== m.seq) return; // typed on meanwhile
  m.kind = '@';
  m.start = i + 1;
  m.items = entries.map((e) => ({ label: '@' + e.name, value: '@' + e.name, dir: e.dir }));
  m.sel = 0;
  drawMenu();
}

// acceptMenu takes the highlighted entry: a command without arguments
// runs at once; one with arguments, a file or a directory goes into the
// box (a directory keeps the menu open a level down).
function acceptMenu() {
  const m = page.menu;
  const it = m.items[m.sel];
  if (!it) return false;
  const ta = $('prompt');
  const end = ta.selectionStart;
  if (m.kind === '/') {
    ta.value = it.value + (it.run ? '' : ' ');
    closeMenu();
    if (it.run) $('composer').requestSubmit();
    else ta.setSelectionRange(ta.value.length, ta.value.length);
    return true;
  }
  const insert = it.value + (it.dir ? '' : ' ');
  ta.value = ta.value.slice(0, m.start) + insert + ta.value.slice(end);
  const at = m.start + insert.length;
  ta.setSelectionRange(at, at);
  closeMenu();
  if (it.dir) refreshMenu();
  return true;
}

// The menu's keys come before the box's own (Enter sends, ↑ recalls).
$('prompt').addEventListener('keydown', (e) => {
  const m = page.menu;
  if (!m.kind || !m.items.length || e.isComposing) return;
  if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
    m.sel = (m.sel + (e.key === 'ArrowDown' ? 1 : m.items.length - 1)) % m.items.length;
    drawMenu();
  } else if ((e.key === 'Enter' && !e.shiftKey) || e.key === 'Tab') {
    if (e.key === 'Enter') swallowBreak = true; // as for the Enter that sends
    acceptMenu();
  } else if (e.key === 'Escape') {
    closeMenu();
  } else {
    return;
  }
  e.preventDefault();
  e.stopImmediatePropagation();
}, true);
$('prompt').addEventListener('input', () => refreshMenu());
$('prompt').addEventListener('blur', () => setTimeout(() => { if (document.activeElement !== $('prompt')) closeMenu(); }, 150));

// remember adds a prompt sent from this page to the recall list; the
// server adds it to the workspace's history.
function remember(text) {
  if (page.prompts[page.prompts.length - 1] !== text) page.prompts.push(text);
}

async function loadPrompts() {
  try {
    const data = await api('GET', '/api/prompts');
    const seen = [];
    for (const p of data.prompts || []) if (seen[seen.length - 1] !== p) seen.push(p);
    page.prompts = seen;
  } catch {
    page.prompts = [];
  }
}

// Esc cancels the running turn, as in the chat, unless it closes a pane.
document.addEventListener('keydown', (e) => {
  if (e.key !== 'Escape' || e.isComposing) return;
  if (closePanes()) return;
  if (page.id && !page.st.closed && page.st.running) {
    e.preventDefault();
    send({ type: 'cancel' }, 'Cancel');
  }
});

$('prompt').addEventListener('keyup', (e) => {
  if (e.key === 'Enter') swallowBreak = false;
});
$('prompt').addEventListener('beforeinput', (e) => {
  if (swallowBreak && (e.inputType === 'insertLineBreak' || e.inputType === 'insertParagraph')) e.preventDefault();
});

// At a narrow width the session list and the side panels are panes over
// the chat, opened by their buttons in the header.
function togglePane(name) {
  const app = $('app');
  const other = name === 'sessions' ? 'side' : 'sessions';
  const on = !app.classList.contains('show-' + name);
  app.classList.toggle('show-' + name, on);
  app.classList.remove('show-' + other);
  $('toggle-' + name).setAttribute('aria-expanded', String(on));
  $('toggle-' + other).setAttribute('aria-expanded', 'false');
}

function closePanes() {
  const app = $('app');
  const open = app.classList.contains('show-sessions') || app.classList.contains('show-side');
  app.classList.remove('show-sessions', 'show-side');
  $('toggle-sessions').setAttribute('aria-expanded', 'false');
  $('toggle-side').setAttribute('aria-expanded', 'false');
  return open;
}

$('toggle-sessions').addEventListener('click', () => togglePane('sessions'));
$('toggle-side').addEventListener('click', () => togglePane('side'));

$('cancel-turn').addEventListener('click', () => send({ type: 'cancel' }, 'Cancel'));
$('compact').addEventListener('click', () => send({ type: 'compact' }, 'Compact'));
$('posture').addEventListener('change', (e) => send({ type: 'set_posture', posture: e.target.value }, 'Posture change'));
$('goal-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const objective = $('goal-input').value;
  if (!objective.trim()) return;
  if (await send({ type: 'goal', objective }, 'Starting the goal')) $('goal-input').value = '';
});
$('goal-clear').addEventListener('click', () => send({ type: 'goal_clear' }, 'Clearing the goal'));

// ---- drawing ----------------------------------------------------------------------

function draw() {
  if (page.drawQueued) return;
  page.drawQueued = true;
  requestAnimationFrame(() => {
    page.drawQueued = false;
    drawNow();
  });
}

function nearBottom() {
  const log = $('log');
  return log.scrollHeight - log.scrollTop - log.clientHeight < 80;
}

function scrollDown(force) {
  const log = $('log');
  if (force || page.stick) log.scrollTop = log.scrollHeight;
  $('jump').hidden = force || page.stick;
  page.seenSize = log.scrollHeight + 'x' + log.clientHeight;
}

// The log follows new output while the user is at its end; scrolled up,
// it stays where they are and offers the way back. A scroll that comes
// with a change of size (the window resized, content rewrapped) is the
// browser's, not the user's: the resize observers below answer it.
$('log').addEventListener('scroll', () => {
  const log = $('log');
  if (page.seenSize !== log.scrollHeight + 'x' + log.clientHeight) return;
  page.stick = nearBottom();
  $('jump').hidden = page.stick;
});
// A log that changes size (a narrower window rewraps it, a code block
// renders) stays at its end if it was there.
const keepEnd = new ResizeObserver(() => scrollDown(false));
for (const id of ['log', 'items', 'history']) keepEnd.observe($(id));
$('jump').addEventListener('click', () => {
  page.stick = true;
  scrollDown(true);
  $('prompt').focus();
});

function drawNow() {
  const st = page.st;
  const changed = st.changed;
  st.changed = new Set();
  const byID = new Map();
  for (const it of st.items.slice(-changed.size - 1)) byID.set(it.id, it);
  for (const key of changed) {
    if (key[0] !== 'i') continue;
    const item = byID.get(key) || st.items.find((x) => x.id === key);
    if (item) drawItem(item);
  }
  if (changed.has('status')) drawStatus();
  if (changed.has('approvals')) drawApprovals();
  if (changed.has('elicitations')) drawElicitations();
  if (changed.has('tasks')) drawFleet();
  if (changed.has('goal')) drawGoal();
  if (changed.has('mcp')) {
    drawMCP();
    loadCommands();
  }
  const cutoff = page.fullHistory ? page.history.length : historyCutoff(page.history, page.liveFrom, st.replayedTurns);
  if (cutoff !== page.shownCutoff) drawHistory(cutoff);
  scrollDown(page.opening);
  page.opening = false;
}

function drawHistory(cutoff) {
  page.shownCutoff = cutoff;
  const box = $('history');
  box.replaceChildren();
  const calls = new Map(); // call_id -> the card its result fills in
  for (const m of page.history.slice(0, cutoff)) {
    if (m.role === 'user') {
      box.append(userMessage(m.text || '', m.attachments, 'history-user'));
    } else if (m.role === 'assistant' && m.tool) {
      const t = { call: m.call_id, tool: m.tool, args: m.args || '', subject: toolSubject(m.tool, m.args), state: 'done', decision: '', output: '', durationMS: null, progress: '' };
      const el = drawTool(null, t);
      el.dataset.testid = 'history-tool';
      if (m.call_id) calls.set(m.call_id, [el, t]);
      box.append(el);
    } else if (m.role === 'assistant') {
      if (!m.text) continue;
      const md = h('div', { class: 'md', 'data-testid': 'answer' });
      md.innerHTML = renderMarkdown(m.text);
      box.append(h('article', { class: 'msg assistant', 'data-testid': 'history-assistant' }, md));
    } else if (m.role === 'tool') {
      let [el, t] = calls.get(m.call_id) || [null, null];
      if (!t) {
        t = { call: m.call_id, tool: m.tool || 'tool', args: '', subject: '', state: 'done', decision: '', output: '', durationMS: null, progress: '' };
        el = drawTool(null, t);
        el.dataset.testid = 'history-tool';
        box.append(el);
      }
      t.output = cut(m.text || '', 4096);
      t.state = t.output.startsWith('Blocked:') ? 'blocked' : 'done';
      drawTool(el, t);
    }
  }
}

// userMessage is a user's message as typed, the files and directories it
// attached shown as chips above it.
function userMessage(text, attachments, testid) {
  const el = h('div', { class: 'msg user', 'data-testid': testid });
  if (attachments && attachments.length) {
    el.append(h('div', { class: 'chips' }, ...attachments.map((p) => h('span', { class: 'chip', 'data-testid': 'attachment', title: p, text: '@' + p }))));
  }
  el.append(h('div', { class: 'u-text', text }));
  return el;
}

function drawItem(item) {
  let el = page.els.get(item.id);
  const fresh = !el;
  switch (item.kind) {
    case 'user':
      if (fresh) el = userMessage(sentText(item.text), item.attachments, 'user-message');
      break;
    case 'assistant': {
      if (fresh) {
        el = h('article', { class: 'msg assistant', 'data-testid': 'assistant-message' },
          item.role ? h('div', { class: 'who', text: item.role }) : null,
          h('details', { class: 'reasoning', 'data-testid': 'reasoning', hidden: true }, h('summary', { text: 'Reasoning' }), h('div')),
          h('div', { class: 'md', 'data-testid': 'answer' }));
      }
      const r = el.querySelector('details.reasoning');
      r.hidden = !item.reasoning;
      r.lastChild.textContent = item.reasoning;
      // Model text: renderMarkdown escapes every character of it first.
      el.querySelector('.md').innerHTML = renderMarkdown(item.text);
      break;
    }
    case 'tool':
      el = drawTool(el, item);
      break;
    case 'plan': {
      if (fresh) el = h('article', { class: 'msg plan', 'data-testid': 'plan' }, h('div', { class: 'who', text: item.title }), h('div', { class: 'md' }));
      el.querySelector('.md').innerHTML = renderMarkdown(item.text);
      break;
    }
    case 'error':
      if (fresh) el = h('div', { class: 'error', 'data-testid': 'error', role: 'alert' });
      el.textContent = item.text;
      break;
    default:
      if (fresh) el = h('div', { class: 'notice ' + (item.level || ''), 'data-testid': 'notice' });
      el.textContent = item.text;
  }
  if (fresh) {
    page.els.set(item.id, el);
    $('items').append(el);
  }
}

function toolStateText(t) {
  switch (t.state) {
    case 'waiting':
      return 'waiting for approval';
    case 'running':
      return t.progress ? 'running · ' + t.progress : 'running';
    case 'blocked':
      return t.decision === 'deny' ? 'denied · blocked' : 'blocked';
    case 'error':
      return 'error';
  }
  return t.decision && t.decision !== 'deny' ? 'done · approved ' + t.decision : 'done';
}

function drawTool(el, t) {
  if (!el) {
    el = h('div', { class: 'tool', 'data-testid': 'tool-card', 'data-call': t.call, 'data-tool': t.tool },
      h('div', { class: 't-head' }, h('span', { class: 't-name' }), h('span', { class: 't-subject' }), h('span', { class: 't-state', 'data-testid': 'tool-state' }), h('span', { class: 'meta t-dur', 'data-testid': 'tool-duration' })),
      h('details', { hidden: true }, h('summary', { text: 'output' }), h('pre', { 'data-testid': 'tool-output' })));
  }
  el.dataset.state = t.state;
  el.querySelector('.t-name').textContent = t.tool;
  const subject = t.subject || toolSubject(t.tool, t.args);
  el.querySelector('.t-subject').textContent = subject;
  el.querySelector('.t-subject').title = subject;
  el.querySelector('.t-state').textContent = toolStateText(t);
  el.querySelector('.t-dur').textContent = t.durationMS !== null && t.durationMS !== undefined ? duration(t.durationMS) : '';
  const d = el.querySelector('details');
  d.hidden = !t.output;
  d.lastChild.textContent = t.output;
  // An error is worth seeing without a click.
  if (t.state === 'error' || t.state === 'blocked') d.open = true;
  return el;
}

function duration(ms) {
  if (ms < 1000) return ms + ' ms';
  const s = ms / 1000;
  if (s < 60) return s.toFixed(s < 10 ? 1 : 0) + ' s';
  const m = Math.floor(s / 60);
  return m + 'm' + String(Math.floor(s % 60)).padStart(2, '0') + 's';
}

function tokens(n) {
  if (!n) return '0';
  return n < 10000 ? String(n) : (n / 1000).toFixed(n < 100000 ? 1 : 0) + 'k';
}

function drawStatus() {
  const st = page.st;
  const live = !!page.id && !st.closed;
  const s = page.sessions.find((x) => x.id === page.id);
  $('session-title').textContent = page.id ? cut((s && s.title) || page.id, 80) : 'No session';
  const meta = [st.info.model, st.info.cwd].filter(Boolean).join(' · ');
  $('session-meta').textContent = meta;
  let status = !page.id ? '' : st.closed ? 'closed' : st.running ? 'working…' : 'idle';
  if (st.usage) {
    const u = st.usage;
    status += ' · ' + tokens(u.total_tokens) + ' tokens';
    if (u.prompt_tokens) status += ' · ' + ((100 * (u.cache_hit_tokens || 0)) / u.prompt_tokens).toFixed(0) + '% cache';
  }
  $('status').textContent = status;
  $('status').title = status;
  $('status').dataset.state = st.closed ? 'closed' : st.running ? 'running' : 'idle';
  // With no session open the box takes the first message, which starts
  // one; a closed session is resumed from the list first.
  $('prompt').disabled = !!page.id && !live;
  $('send').disabled = !!page.id && !live;
  $('cancel-turn').disabled = !live || !st.running;
  $('compact').disabled = !live;
  // Switching reopens the session, which would cancel a running turn.
  $('plan').disabled = !!page.id && (!live || st.running);
  $('plan').setAttribute('aria-pressed', String(!!st.plan));
  $('posture').disabled = !live;
  if (st.posture) $('posture').value = st.posture;
  $('goal-input').disabled = !live;
  $('goal-form').querySelector('button[type=submit]').disabled = !live;
  $('goal-clear').disabled = !live || !st.goal;
  const q = $('queued');
  q.hidden = !st.queued.length;
  q.textContent = st.queued.length ? 'Queued: ' + st.queued.map((p) => '“' + cut(p, 60) + '”').join(', ') : '';
}

function drawApprovals() {
  const box = $('approvals');
  const open = new Set();
  for (const a of page.st.approvals.values()) {
    open.add(a.request_id);
    if (box.querySelector('[data-request-id="' + CSS.escape(a.request_id) + '"]')) continue;
    box.append(approvalCard(a));
  }
  for (const card of [...box.children]) if (!open.has(card.dataset.requestId)) card.remove();
}

function prettyArgs(args) {
  try {
    return JSON.stringify(JSON.parse(args), null, 2);
  } catch {
    return args || '';
  }
}

// approvalBody is what an approval shows of its call, as the chat shows
// it: a write's or an edit's diff (the event's preview), a delegation's
// tasks, else the arguments; the raw arguments stay one click away.
function approvalBody(a) {
  const raw = h('pre', { 'data-testid': 'approval-args', text: prettyArgs(a.args) });
  if (a.preview) {
    const pre = h('pre', { class: 'diff', 'data-testid': 'approval-preview' });
    for (const line of a.preview.split('\n')) {
      const cls = line.startsWith('+++') || line.startsWith('---') ? 'd-file' : line.startsWith('+') ? 'd-add' : line.startsWith('-') ? 'd-del' : line.startsWith('@@') ? 'd-hunk' : '';
      pre.append(h('span', { class: cls, text: line + '\n' }));
    }
    return [pre, h('details', {}, h('summary', { class: 'meta', text: 'arguments' }), raw)];
  }
  const tasks = delegatedTasks(a.tool, a.args);
  if (tasks) {
    return [h('p', { 'data-testid': 'approval-tasks-count', text: tasks.length + (tasks.length === 1 ? ' task:' : ' tasks:') }),
      h('ol', { class: 'tasks', 'data-testid': 'approval-tasks' }, ...tasks.map((t) => h('li', { text: cut(t, 300) }))),
      h('details', {}, h('summary', { class: 'meta', text: 'arguments' }), raw)];
  }
  return [raw];
}

// delegatedTasks are the prompts of a fleet, parallel_tasks or task call,
// or null for any other call.
function delegatedTasks(tool, args) {
  if (!['fleet', 'parallel_tasks', 'task'].includes(tool)) return null;
  let v;
  try {
    v = JSON.parse(args);
  } catch {
    return null;
  }
  if (tool === 'task') return typeof v.prompt === 'string' ? [v.prompt] : null;
  const list = Array.isArray(v.tasks) ? v.tasks : null;
  if (!list) return null;
  return list.map((t) => (typeof t === 'string' ? t : t && typeof t.prompt === 'string' ? t.prompt : JSON.stringify(t)));
}

function approvalCard(a) {
  const title = 'Allow ' + a.tool + (a.task ? ' (task ' + a.task + ')' : '') + '?';
  const hid = 'ap-' + a.request_id.replace(/[^\w-]/g, '_');
  const err = h('p', { class: 'err', role: 'alert', hidden: true });
  const suggestions = a.suggestions || [];
  const rule = suggestions.length > 1 ? h('select', { 'data-testid': 'approval-rule', 'aria-label': 'Rule to remember' }, ...suggestions.map((s) => h('option', { value: s, text: s }))) : null;
  const buttons = h('div', { class: 'buttons' });
  const card = h('section', { class: 'approval', role: 'alertdialog', 'aria-labelledby': hid, 'data-testid': 'approval', 'data-request-id': a.request_id, 'data-tool': a.tool },
    h('h3', { id: hid, text: title }),
    a.reason ? h('p', { class: 'meta', 'data-testid': 'approval-reason', text: a.reason }) : null,
    ...approvalBody(a),
    rule ? h('label', { class: 'meta' }, 'Remember as ', rule) : suggestions.length === 1 ? h('p', { class: 'meta', text: 'Rule: ' + suggestions[0] }) : null,
    buttons, err);
  const decisions = a.once_only ? ['once', 'deny'] : ['once', 'session', 'always', 'deny'];
  const label = { once: 'Allow once', session: 'Allow for this session', always: 'Always allow', deny: 'Deny' };
  for (const d of decisions) {
    buttons.append(h('button', { type: 'button', class: d === 'deny' ? 'deny' : d === 'once' ? 'primary' : '', 'data-testid': 'approve-' + d, text: label[d], onclick: async () => {
      for (const b of buttons.children) b.disabled = true;
      err.hidden = true;
      const cmd = { type: 'approve', id: a.request_id, decision: d };
      if (rule && (d === 'session' || d === 'always')) cmd.rule = rule.value;
      try {
        await command(cmd);
        card.dataset.answered = d;
      } catch (e) {
        err.textContent = 'Could not answer: ' + e.message;
        err.hidden = false;
        for (const b of buttons.children) b.disabled = false;
      }
    } }));
  }
  return card;
}

function drawElicitations() {
  const box = $('elicitations');
  const open = new Set();
  for (const e of page.st.elicitations.values()) {
    open.add(e.request_id);
    if (box.querySelector('[data-request-id="' + CSS.escape(e.request_id) + '"]')) continue;
    box.append(elicitationCard(e));
  }
  for (const card of [...box.children]) if (!open.has(card.dataset.requestId)) card.remove();
}

function elicitationCard(e) {
  const hid = 'el-' + e.request_id.replace(/[^\w-]/g, '_');
  const fields = formFields(e.schema);
  const form = h('form', { 'data-testid': 'elicitation-form' });
  form.addEventListener('submit', (ev) => {
    // Enter in a field accepts, as in the chat; the page never navigates.
    ev.preventDefault();
    answer('accept');
  });
  const read = [];
  for (const f of fields) {
    const [input, value] = fieldInput(f, hid);
    read.push([f.name, value]);
    form.append(input);
  }
  const error = h('p', { class: 'err', role: 'alert', 'data-testid': 'elicitation-error', hidden: true });
  form.append(error);
  const card = h('section', { class: 'approval', role: 'alertdialog', 'aria-labelledby': hid, 'data-testid': 'elicitation', 'data-request-id': e.request_id },
    h('h3', { id: hid, text: e.server + ' asks' }),
    h('p', { text: e.message || '' }));
  if (e.mode === 'url' && e.url) {
    const a = document.createElement('a');
    a.textContent = e.url;
    if (/^https?:/i.test(e.url)) {
      a.href = e.url;
      a.rel = 'noopener noreferrer';
      a.target = '_blank';
    }
    card.append(h('p', {}, a));
  } else if (fields.length) card.append(form);
  const answer = async (action) => {
    const cmd = { type: 'elicitation', id: e.request_id, action };
    if (action === 'accept' && fields.length) {
      if (!form.reportValidity()) return;
      const got = formContent(fields, Object.fromEntries(read.map(([name, value]) => [name, value()])));
      error.hidden = !got.error;
      error.textContent = got.error || '';
      if (got.error) return;
      cmd.content = got.content;
    }
    if (await send(cmd, 'Answering ' + e.server)) {
      page.st.elicitations.delete(e.request_id);
      card.remove();
    }
  };
  card.append(h('div', { class: 'buttons' },
    h('button', { type: 'button', class: 'primary', 'data-testid': 'elicit-accept', text: 'Accept', onclick: () => answer('accept') }),
    h('button', { type: 'button', 'data-testid': 'elicit-decline', text: 'Decline', onclick: () => answer('decline') }),
    h('button', { type: 'button', 'data-testid': 'elicit-cancel', text: 'Cancel', onclick: () => answer('cancel') })));
  return card;
}

// fieldInput draws one field of an elicitation form and returns it with
// a function reading its value: its text, checked state or picked options.
function fieldInput(f, hid) {
  const id = hid + '-' + f.name.replace(/[^\w-]/g, '_');
  const label = (f.title || f.name) + (f.required ? ' *' : '');
  const desc = f.desc ? h('span', { class: 'meta', text: ' — ' + f.desc }) : null;
  const wrap = (input) => h('div', { class: 'field', 'data-testid': 'elicitation-field', 'data-field': f.name },
    h('label', { for: id, text: label }), desc, input);
  if (f.kind === 'boolean') {
    const box = h('input', { id, type: 'checkbox', name: f.name });
    box.checked = f.def === true;
    return [wrap(box), () => box.checked];
  }
  if (f.kind === 'enum') {
    const sel = h('select', { id, name: f.name, required: f.required });
    f.options.forEach((o, i) => sel.append(h('option', { value: o, text: f.labels[i] })));
    if (f.options.includes(String(f.def))) sel.value = String(f.def);
    return [wrap(sel), () => sel.value];
  }
  if (f.kind === 'multi') {
    const def = Array.isArray(f.def) ? f.def.map(String) : [];
    const boxes = f.options.map((o, i) => {
      const box = h('input', { type: 'checkbox', name: f.name, value: o, id: id + '-' + i });
      box.checked = def.includes(o);
      return h('label', { class: 'choice', for: id + '-' + i }, box, ' ' + f.labels[i]);
    });
    const group = h('fieldset', { class: 'field', 'data-testid': 'elicitation-field', 'data-field': f.name },
      h('legend', { text: label }), desc, ...boxes);
    return [group, () => boxes.map((l) => l.firstChild).filter((b) => b.checked).map((b) => b.value)];
  }
  const type = f.kind === 'number' || f.kind === 'integer' ? 'number'
    : { email: 'email', uri: 'url', date: 'date', 'date-time': 'datetime-local' }[f.format] || 'text';
  const input = h('input', { id, type, name: f.name, required: f.required, autocomplete: 'off',
    step: f.kind === 'integer' ? '1' : f.kind === 'number' ? 'any' : undefined, min: f.min, max: f.max });
  if (f.def !== undefined && f.def !== null && typeof f.def !== 'object') input.value = String(f.def);
  return [wrap(input), () => input.value];
}

function taskElapsed(row, now) {
  if (row.state === 'done') return row.durationMS !== null ? duration(row.durationMS) : '';
  if (row.state === 'running' && row.started) return duration(Math.max(0, now - row.started));
  return '';
}

function drawFleet() {
  const body = $('fleet-rows');
  const now = Date.now();
  let running = 0, queued = 0, done = 0;
  for (const row of page.st.tasks.values()) {
    let tr = page.rows.get(row.id);
    if (!tr) {
      tr = h('tr', { 'data-testid': 'fleet-row', 'data-task': row.id },
        h('td', { class: 'f-id' }), h('td', { class: 'f-state', 'data-field': 'state' }), h('td', { 'data-field': 'profile' }), h('td', { class: 'f-tool', 'data-field': 'tool' }),
        h('td', { 'data-field': 'tokens' }), h('td', { 'data-field': 'cache' }), h('td', { 'data-field': 'elapsed' }), h('td', {}));
      page.rows.set(row.id, tr);
      const pick = () => {
        page.taskShown = page.taskShown === row.id ? '' : row.id;
        drawFleet();
      };
      tr.tabIndex = 0;
      tr.setAttribute('aria-label', 'Task ' + row.id + ': show its detail');
      tr.addEventListener('click', (e) => {
        if (!e.target.closest('button')) pick();
      });
      tr.addEventListener('keydown', (e) => {
        if ((e.key === 'Enter' || e.key === ' ') && e.target === tr) {
          e.preventDefault();
          pick();
        }
      });
      body.append(tr);
    }
    tr.classList.toggle('selected', row.id === page.taskShown);
    if (row.state === 'running') running++;
    else if (row.state === 'done') done++;
    else queued++;
    tr.dataset.state = row.state;
    tr.dataset.status = row.status || '';
    // A background task is marked (the stylesheet draws it); its name,
    // when it has one, follows its id.
    tr.dataset.background = row.background ? 'true' : '';
    const c = tr.children;
    c[0].textContent = row.name ? row.id + ' · ' + row.name : row.id;
    c[0].title = (row.background ? 'background · ' : '') + row.prompt;
    c[1].textContent = row.state === 'done' ? row.status || 'done' : row.state;
    // Where a task runs, when that is a worker host, and its attempt.
    c[1].title = row.error || (row.worker ? 'on ' + row.worker + (row.attempt > 1 ? ', attempt ' + row.attempt : '') : '');
    c[2].textContent = (row.profile || '—') + (row.writer ? ' ✎' : '');
    c[3].textContent = row.tool || '';
    c[4].textContent = tokens(row.tokens);
    c[5].textContent = row.cachePct === null || row.cachePct === undefined ? '' : row.cachePct.toFixed(0) + '%';
    c[6].textContent = taskElapsed(row, now);
    const cancellable = row.state !== 'done' && !page.st.closed;
    let btn = c[7].firstChild;
    if (cancellable && !btn) {
      btn = h('button', { type: 'button', 'data-testid': 'cancel-task', 'aria-label': 'Cancel task ' + row.id, text: '✕', onclick: async () => {
        btn.disabled = true;
        if (!(await send({ type: 'cancel_task', id: row.id }, 'Cancelling ' + row.id))) btn.disabled = false;
      } });
      c[7].append(btn);
    } else if (!cancellable && btn) btn.remove();
  }
  drawTaskDetail(now);
  const n = page.st.tasks.size;
  $('fleet-count').textContent = n ? n + ' tasks · ' + done + ' done · ' + running + ' running · ' + queued + ' queued' : '';
}

// drawTaskDetail shows the task picked in the fleet table: its prompt,
// state, current tool, tokens and last lines, with its cancel.
function drawTaskDetail(now) {
  const box = $('task-detail');
  const row = page.taskShown && page.st.tasks.get(page.taskShown);
  if (!row) {
    box.hidden = true;
    box.replaceChildren();
    return;
  }
  const state = row.state === 'done' ? row.status || 'done' : row.state;
  const facts = [state, row.profile ? 'profile ' + row.profile : '', row.tool ? 'in ' + row.tool : '', row.tools + ' tool calls', tokens(row.tokens) + ' tokens', taskElapsed(row, now), row.worker ? 'on ' + row.worker : ''].filter(Boolean).join(' · ');
  const kids = [h('h3', { text: row.id }), h('div', { class: 'meta', 'data-testid': 'task-facts', text: facts }),
    h('pre', { 'data-testid': 'task-prompt', text: row.prompt || '' })];
  if (row.error) kids.push(h('div', { class: 'err', text: row.error }));
  kids.push(h('pre', { 'data-testid': 'task-tail', text: row.tail || '(no output yet)' }));
  if (row.state !== 'done' && !page.st.closed) {
    kids.push(h('button', { type: 'button', 'data-testid': 'task-detail-cancel', text: 'Cancel ' + row.id, onclick: () => send({ type: 'cancel_task', id: row.id }, 'Cancelling ' + row.id) }));
  }
  // A follow-up run is its agent's: messages go to the agent.
  if (!page.st.closed && row.status !== 'cancelled') kids.push(messageForm(row.id.split('+')[0]));
  box.replaceChildren(...kids);
  box.hidden = false;
}

// messageForm is the task detail's message box for agent id, kept across
// redraws so what is being typed survives the task's events. A running
// agent reads the message at its next step; a finished one answers it in
// one more turn of its own conversation.
function messageForm(id) {
  if (page.msgForm && page.msgForm.dataset.task === id) return page.msgForm;
  const input = h('input', { type: 'text', 'data-testid': 'task-message', 'aria-label': 'Message to ' + id, autocomplete: 'off',
    placeholder: 'Message ' + id });
  const form = h('form', { class: 'task-message', 'data-task': id }, input,
    h('button', { type: 'submit', 'data-testid': 'task-message-send', text: 'Send' }));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const text = input.value.trim();
    if (text && (await send({ type: 'send_message', to: id, text }, 'Message to ' + id))) input.value = '';
  });
  page.msgForm = form;
  return form;
}

// Running tasks' clocks tick without events.
setInterval(() => {
  const now = Date.now();
  for (const row of page.st.tasks.values()) {
    if (row.state !== 'running') continue;
    const tr = page.rows.get(row.id);
    if (tr) tr.children[6].textContent = taskElapsed(row, now);
  }
}, 1000);

function drawGoal() {
  const g = page.st.goal;
  const box = $('goal');
  box.replaceChildren();
  if (!g) {
    box.append(h('p', { class: 'meta', text: 'No goal.' }));
    return;
  }
  const limits = [];
  limits.push('turn ' + g.turn + (g.maxTurns ? '/' + g.maxTurns : ''));
  limits.push(tokens(g.tokens) + (g.maxTokens ? '/' + tokens(g.maxTokens) : '') + ' tokens');
  limits.push(duration(g.elapsedMS || 0) + (g.maxTimeMS ? '/' + duration(g.maxTimeMS) : ''));
  if (g.todo) limits.push('todo ' + g.todoDone + '/' + g.todo);
  box.append(
    h('p', { class: 'g-obj', 'data-testid': 'goal-objective', text: cut(g.objective, 300) }),
    h('p', { class: 'meta' }, h('span', { 'data-testid': 'goal-status', 'data-status': g.status, text: g.status + (g.report && g.status === 'running' ? ' (' + g.report + ')' : '') }), ' · ' + (g.strategy || '') + ' · ' + limits.join(' · ')));
  if (g.reason) box.append(h('p', { class: 'err', 'data-testid': 'goal-reason', text: g.reason }));
  if (g.summary) {
    const md = h('div', { class: 'md', 'data-testid': 'goal-summary' });
    // The summary is the model's words: escaped by the renderer.
    md.innerHTML = renderMarkdown(cut(g.summary, 2000));
    box.append(md);
  }
  $('goal-clear').disabled = !page.id || page.st.closed;
}

function drawMCP() {
  const ul = $('mcp');
  ul.replaceChildren();
  if (!page.st.mcp.size) {
    ul.append(h('li', { class: 'meta', text: 'None.' }));
    return;
  }
  for (const m of [...page.st.mcp.values()].sort((a, b) => a.server.localeCompare(b.server))) {
    const counts = [m.tools + ' tools', m.prompts ? m.prompts + ' prompts' : '', m.resources ? m.resources + ' resources' : ''].filter(Boolean).join(', ');
    ul.append(h('li', { 'data-testid': 'mcp-server', 'data-server': m.server, 'data-state': m.state },
      h('strong', { text: m.server }), h('span', { class: 'm-state', text: m.state }),
      h('div', { class: 'meta', text: [m.source, counts, m.failures ? m.failures + ' failures' : '', m.error || ''].filter(Boolean).join(' · ') })));
  }
}

// ---- start --------------------------------------------------------------------------

async function boot() {
  try {
    page.auth = await api('GET', '/api/auth');
  } catch (e) {
    $('boot').textContent = 'The server is not answering: ' + e.message;
    return;
  }
  if (!page.auth.authenticated && page.auth.mode !== 'none') {
    showLogin();
    return;
  }
  $('boot').hidden = true;
  $('login').hidden = true;
  $('app').hidden = false;
  const gen = page.gen;
  await Promise.all([loadSessions(), loadPrompts(), loadCommands()]);
  // The user may have opened or started a session meanwhile: theirs wins.
  if (gen !== page.gen || page.id) return;
  const m = /^#s=(.+)$/.exec(location.hash);
  const want = m ? decodeURIComponent(m[1]) : '';
  if (want && page.sessions.some((s) => s.id === want && s.live)) open(want);
  else if (want && page.sessions.some((s) => s.id === want)) resume(want);
  else {
    const live = page.sessions.find((s) => s.live);
    if (live) open(live.id);
    else drawStatus();
  }
  if (!page.id) $('prompt').focus();
}

setInterval(() => {
  if (!$('app').hidden && document.visibilityState === 'visible') loadSessions();
}, 15000);

boot();
