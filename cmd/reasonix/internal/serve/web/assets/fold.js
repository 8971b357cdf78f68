// The event fold: the page's whole view of a session, built from the
// snapshot and the stream-json events (docs/SPEC.md "Stream-json events"
// and "Snapshot"). It touches no DOM, so it can be driven and checked on its
// own; the view reads the state and the set of things that changed.

/** newState returns the empty view of a session. */
export function newState() {
  return {
    seq: 0, // the last event folded; replays at or below it are duplicates
    snapSeq: 0, // the seq of the latest snapshot
    info: { model: '', cwd: '' },
    items: [], // the chat, in order: {id, kind, v, ...}
    changed: new Set(), // ids of items (and panel names) touched since the view last drew
    tools: new Map(), // call_id -> tool item of the main session
    cur: null, // the assistant item text_delta appends to
    turnText: false, // the running turn has streamed text
    running: false,
    prompt: '',
    queued: [],
    tasks: new Map(), // task id -> fleet row, in the order first seen
    approvals: new Map(), // request_id -> pending approval
    elicitations: new Map(), // request_id -> open elicitation
    mcp: new Map(), // server name -> latest mcp_server state
    goal: null,
    posture: '',
    plan: false, // the session is planning: it opened in plan mode and no plan was approved since
    usage: null, // the main session's running total
    replayedTurns: 0, // main-session turn_started events at or below snapSeq
    lagged: false,
    // rebuilt: this state was built after a lag, from a snapshot taken
    // mid-way; a turn it joins has streamed text it never saw.
    rebuilt: false,
    sawTurn: false,
    closed: false,
    nextID: 1,
  };
}

function touch(st, item) {
  item.v = (item.v || 0) + 1;
  st.changed.add(item.id);
}

function mark(st, panel) {
  st.changed.add(panel);
}

function add(st, kind, fields) {
  const item = { id: 'i' + st.nextID++, kind, v: 0, ...fields };
  st.items.push(item);
  touch(st, item);
  return item;
}

/**
 * toolSubject is the one-line "what" of a tool call, taken from its
 * arguments: the path, command, pattern or query it works on.
 * @param {string} tool
 * @param {string} args raw JSON text
 */
export function toolSubject(tool, args) {
  let a;
  try {
    a = JSON.parse(args || '{}');
  } catch {
    return '';
  }
  if (!a || typeof a !== 'object') return '';
  if (Array.isArray(a.tasks)) return a.tasks.length + (a.tasks.length === 1 ? ' task' : ' tasks');
  for (const k of ['path', 'file_path', 'command', 'pattern', 'query', 'url', 'uri', 'prompt', 'objective', 'name', 'server']) {
    if (typeof a[k] === 'string' && a[k] !== '') return cut(a[k], 120);
  }
  // A report (goal, complete_step): its status and what it says.
  if (typeof a.summary === 'string' || typeof a.status === 'string') return cut([a.status, a.summary].filter((x) => typeof x === 'string' && x !== '').join(': '), 120);
  return '';
}

/** cut shortens s to at most n characters (code points), marking the cut. */
export function cut(s, n) {
  const chars = Array.from(String(s));
  return chars.length <= n ? String(s) : chars.slice(0, n - 1).join('') + '…';
}

// tailOf keeps the last 8 lines (at most 1200 characters) of a task's
// output.
function tailOf(s) {
  const lines = s.slice(-1200).split('\n');
  return lines.slice(-8).join('\n');
}

function task(st, id) {
  let row = st.tasks.get(id);
  if (!row) {
    row = { id: id, fleet: '', prompt: '', profile: '', writer: false, model: '', worker: '', attempt: 1, state: 'queued', status: '', error: '', tool: '', tokens: 0, cachePct: null, started: 0, durationMS: null, tail: '', tools: 0 };
    st.tasks.set(id, row);
  }
  mark(st, 'tasks');
  return row;
}

function cachePct(u) {
  if (!u || !u.prompt_tokens) return null;
  return (100 * (u.cache_hit_tokens || 0)) / u.prompt_tokens;
}

/**
 * applySnapshot folds a snapshot in. It sets what the snapshot knows
 * (tasks, approvals, elicitations, MCP servers, posture, the running turn)
 * and leaves the chat alone; events that follow with seq at or below the
 * snapshot's replay into the same state.
 */
export function applySnapshot(st, snap) {
  st.snapSeq = snap.seq || 0;
  st.running = !!snap.running;
  st.prompt = snap.prompt || '';
  st.queued = Array.isArray(snap.queued) ? snap.queued.slice() : [];
  if (snap.posture) st.posture = snap.posture;
  for (const t of snap.tasks || []) {
    const row = task(st, t.id);
    Object.assign(row, { fleet: t.fleet || '', prompt: t.prompt || '', profile: t.profile || '', writer: !!t.writer, model: t.model || row.model, state: t.state || row.state, status: t.status || '', error: t.error || '', worker: t.worker || '', attempt: t.attempt || 1,
      background: !!t.background, name: t.name || '' });
    if (row.state !== 'running') row.tool = '';
  }
  const known = st.approvals;
  st.approvals = new Map();
  for (const a of snap.approvals || []) {
    const before = known.get(a.request_id);
    st.approvals.set(a.request_id, { ...a, once_only: before ? before.once_only : !!a.once_only });
  }
  st.elicitations = new Map();
  for (const e of snap.elicitations || []) st.elicitations.set(e.request_id, { ...e });
  const servers = Array.isArray(snap.mcp) ? snap.mcp : Object.values(snap.mcp || {});
  st.mcp = new Map();
  for (const m of servers) st.mcp.set(m.server, { ...m });
  for (const p of ['status', 'approvals', 'elicitations', 'mcp', 'tasks']) mark(st, p);
}

/**
 * fold applies one event. It returns false for a duplicate (a seq already
 * folded, as a reconnect's replay may repeat), true otherwise.
 */
export function fold(st, ev) {
  if (ev.type === 'snapshot') {
    applySnapshot(st, ev);
    return true;
  }
  if (ev.type === 'lagged') {
    st.lagged = true;
    mark(st, 'status');
    return true;
  }
  if (ev.type === 'session_closed') {
    st.closed = true;
    st.running = false;
    mark(st, 'status');
    return true;
  }
  if (typeof ev.seq === 'number' && ev.seq > 0) {
    if (ev.seq <= st.seq) return false;
    st.seq = ev.seq;
  }
  // Approvals and elicitations belong to the page whoever asks: a
  // subagent's request names its task but is answered here.
  switch (ev.type) {
    case 'approval_requested':
      st.approvals.set(ev.request_id, { seq: ev.seq, task: ev.task || '', request_id: ev.request_id, call_id: ev.call_id, tool: ev.tool, args: ev.args, reason: ev.reason, preview: ev.preview || '', suggestions: ev.suggestions || [], once_only: !!ev.once_only });
      mark(st, 'approvals');
      return true;
    case 'approval_resolved': {
      st.approvals.delete(ev.request_id);
      mark(st, 'approvals');
      const t = !ev.task && st.tools.get(ev.call_id);
      if (t) {
        t.decision = ev.decision;
        t.reason = ev.reason || '';
        touch(st, t);
      }
      return true;
    }
    case 'elicitation_requested':
      st.elicitations.set(ev.request_id, { seq: ev.seq, request_id: ev.request_id, server: ev.server, message: ev.message, mode: ev.mode, schema: ev.schema, url: ev.url });
      mark(st, 'elicitations');
      return true;
    case 'mcp_server':
      st.mcp.set(ev.server, { server: ev.server, source: ev.source, state: ev.state, tools: ev.tools, prompts: ev.prompts, resources: ev.resources, error: ev.error, failures: ev.failures });
      if (ev.state !== 'ready') {
        for (const [id, e] of st.elicitations) if (e.server === ev.server) st.elicitations.delete(id);
        mark(st, 'elicitations');
      }
      mark(st, 'mcp');
      return true;
  }
  if (ev.task) {
    foldTask(st, ev);
    return true;
  }
  foldMain(st, ev);
  return true;
}

// dropApprovals forgets the pending approvals of a task that ended or
// lost its attempt, as the session's snapshot does.
function dropApprovals(st, task) {
  let dropped = false;
  for (const [id, a] of st.approvals) {
    if (a.task === task) {
      st.approvals.delete(id);
      dropped = true;
    }
  }
  if (dropped) mark(st, 'approvals');
}

function foldTask(st, ev) {
  const row = task(st, ev.task);
  switch (ev.type) {
    case 'task_queued':
      Object.assign(row, { fleet: ev.fleet || '', prompt: ev.prompt || '', profile: ev.profile || '', writer: !!ev.writer, state: 'queued',
        background: !!ev.background, name: ev.name || '' });
      break;
    case 'task_started':
      Object.assign(row, { fleet: ev.fleet || row.fleet, model: ev.model || row.model, state: 'running', started: Date.parse(ev.time) || 0, worker: ev.worker || '', attempt: ev.attempt || 1 });
      break;
    case 'task_requeued':
      // Its worker was lost: the task waits for its next start, and
      // nothing the lost attempt asked can be answered any more.
      Object.assign(row, { state: 'queued', tool: '', started: 0 });
      dropApprovals(st, ev.task);
      break;
    case 'text_delta':
      // The task's last lines, for its detail: what it said most lately.
      row.tail = tailOf(row.tail + (ev.text || ''));
      break;
    case 'tool_started':
      row.tool = ev.tool;
      row.tools++;
      row.tail = tailOf(row.tail + (row.tail && !row.tail.endsWith('\n') ? '\n' : '') + '● ' + ev.tool + '\n');
      break;
    case 'tool_finished':
      if (row.tool === ev.tool) row.tool = '';
      break;
    case 'usage':
      if (ev.total) {
        row.tokens = ev.total.total_tokens || 0;
        row.cachePct = cachePct(ev.total);
      }
      break;
    case 'task_done':
      dropApprovals(st, ev.task);
      Object.assign(row, { state: 'done', status: ev.status || '', error: ev.error || '', tool: '', durationMS: ev.duration_ms ?? null });
      if (ev.usage && ev.usage.total_tokens) row.tokens = ev.usage.total_tokens;
      if (typeof ev.cache_hit_pct === 'number') row.cachePct = ev.cache_hit_pct;
      else if (ev.usage) row.cachePct = cachePct(ev.usage) ?? row.cachePct;
      break;
  }
}

function foldMain(st, ev) {
  switch (ev.type) {
    case 'session_started':
      st.info = { model: ev.model || '', cwd: ev.cwd || '' };
      mark(st, 'status');
      break;
    case 'turn_started': {
      st.running = true;
      st.prompt = ev.prompt || '';
      const q = st.queued.indexOf(st.prompt);
      if (q >= 0) st.queued.splice(q, 1);
      if (ev.seq && ev.seq <= st.snapSeq) st.replayedTurns++;
      st.sawTurn = true;
      if (ev.wake) {
        // A turn the session started for background results: no prompt.
        add(st, 'notice', { level: 'info', text: 'Background results came back; the agent reads them.' });
      } else {
        add(st, 'user', { text: ev.typed || ev.prompt || '', attachments: ev.attachments || [], role: ev.role || '' });
      }
      st.cur = null;
      st.turnText = false;
      mark(st, 'status');
      break;
    }
    case 'background_result':
      st.cur = null; // what the agent says next answers it: a message of its own
      add(st, 'notice', { level: ev.status === 'ok' || ev.status === 'message' ? 'info' : 'warn', text: (ev.text || '').split('\n')[0], kind: 'background', agent: ev.agent || '' });
      break;
    case 'prompt_queued':
      st.queued.push(ev.prompt || '');
      mark(st, 'status');
      break;
    case 'prompt_rejected':
      add(st, 'notice', { level: 'warn', text: 'Prompt not sent: ' + (ev.reason || 'rejected') });
      break;
    case 'text_delta':
    case 'reasoning_delta': {
      if (!st.cur || st.cur.role !== (ev.role || '')) st.cur = add(st, 'assistant', { text: '', reasoning: '', role: ev.role || '', partial: st.rebuilt && !st.sawTurn });
      if (ev.type === 'text_delta') {
        st.cur.text += ev.text || '';
        st.turnText = true;
      } else {
        st.cur.reasoning += ev.text || '';
      }
      touch(st, st.cur);
      break;
    }
    case 'tool_waiting':
    case 'tool_started': {
      let t = st.tools.get(ev.call_id);
      if (!t) {
        t = add(st, 'tool', { call: ev.call_id, tool: ev.tool, args: ev.args || '', subject: toolSubject(ev.tool, ev.args), state: 'waiting', decision: '', reason: '', output: '', isError: false, durationMS: null, progress: '' });
        st.tools.set(ev.call_id, t);
      }
      if (ev.type === 'tool_started') t.state = 'running';
      touch(st, t);
      st.cur = null;
      break;
    }
    case 'tool_progress': {
      const t = ev.call_id && st.tools.get(ev.call_id);
      if (t) {
        t.progress = (ev.message || '') + (ev.total ? ' ' + ev.progress + '/' + ev.total : '');
        touch(st, t);
      }
      break;
    }
    case 'tool_finished': {
      let t = st.tools.get(ev.call_id);
      if (!t) {
        t = add(st, 'tool', { call: ev.call_id, tool: ev.tool, args: '', subject: '', decision: '', reason: '', progress: '' });
        st.tools.set(ev.call_id, t);
      }
      const out = ev.output || '';
      Object.assign(t, { output: out, isError: !!ev.is_error, durationMS: ev.duration_ms ?? null, state: out.startsWith('Blocked:') ? 'blocked' : ev.is_error ? 'error' : 'done', progress: '' });
      touch(st, t);
      if (ev.tool === 'exit_plan_mode' && !ev.is_error) {
        st.plan = false; // the plan is approved: the agent carries it out
        mark(st, 'status');
      }
      break;
    }
    case 'notice':
      add(st, 'notice', { level: ev.level || 'info', text: ev.message || '' });
      break;
    case 'error':
      add(st, 'error', { text: ev.message || '' });
      break;
    case 'usage':
      st.usage = ev.total || ev.usage || null;
      mark(st, 'status');
      break;
    case 'turn_done':
      st.running = false;
      st.prompt = '';
      if (!st.turnText && ev.text) add(st, 'assistant', { text: ev.text, reasoning: '', role: ev.role || '' });
      else if (st.cur && st.cur.partial && ev.text && ev.text.endsWith(st.cur.text)) {
        // Joined mid-stream after a lag: the turn's own record is whole.
        st.cur.text = ev.text;
        st.cur.partial = false;
        touch(st, st.cur);
      }
      if (ev.status && ev.status !== 'ok') add(st, ev.status === 'failed' ? 'error' : 'notice', { level: 'warn', text: 'Turn ' + ev.status + (ev.error ? ': ' + ev.error : '') });
      st.cur = null;
      st.turnText = false;
      st.elicitations.clear();
      mark(st, 'elicitations');
      mark(st, 'status');
      break;
    case 'posture_changed':
      st.posture = ev.posture || '';
      mark(st, 'status');
      break;
    case 'compaction_started':
      add(st, 'notice', { level: 'info', text: 'Compacting ' + (ev.messages || 0) + ' messages…' });
      break;
    case 'compaction':
      add(st, 'notice', { level: 'info', text: 'Compacted (' + ev.tier + '): ' + ev.tokens_before + ' → ' + ev.tokens_after + ' tokens' });
      break;
    case 'plan_ready':
    case 'plan_proposed':
      add(st, 'plan', { text: ev.plan || '', title: ev.type === 'plan_ready' ? 'Plan (round ' + (ev.round || 1) + ')' : 'Proposed plan' });
      st.cur = null;
      break;
    case 'plan_step':
      add(st, 'notice', { level: 'info', text: 'Step done: ' + (ev.step || '') + (ev.summary ? ' — ' + ev.summary : '') });
      break;
    case 'goal_started':
      st.goal = { id: ev.goal, objective: ev.objective || '', strategy: ev.strategy || '', status: 'running', turn: 0, tokens: 0, elapsedMS: 0, report: '', summary: '', todo: 0, todoDone: 0, maxTurns: ev.max_turns || 0, maxTokens: ev.max_tokens || 0, maxTimeMS: ev.max_time_ms || 0, reason: '' };
      mark(st, 'goal');
      break;
    case 'goal_progress':
      if (st.goal) {
        Object.assign(st.goal, { turn: ev.turn || 0, tokens: ev.tokens || 0, elapsedMS: ev.elapsed_ms || 0, report: ev.report || '', summary: ev.summary || '', todo: ev.todo || 0, todoDone: ev.todo_done || 0 });
        mark(st, 'goal');
      }
      break;
    case 'goal_ended':
      if (!st.goal) st.goal = { id: ev.goal, objective: '', strategy: '' };
      Object.assign(st.goal, { status: ev.status || 'ended', reason: ev.reason || '', summary: ev.summary || st.goal.summary || '', turn: ev.turns ?? st.goal.turn, tokens: ev.tokens ?? st.goal.tokens, elapsedMS: ev.elapsed_ms ?? st.goal.elapsedMS });
      mark(st, 'goal');
      break;
  }
}

/**
 * historyCutoff says how many of the transcript's messages to show above
 * the replayed chat: the ones no replayed event covers. The server's
 * live_from says exactly; without it, drop the last k user-led groups,
 * k being the main-session turns the replay holds up to the snapshot.
 * @param {Array<{role:string}>} messages
 * @param {number|undefined} liveFrom
 * @param {number} replayedTurns
 */
export function historyCutoff(messages, liveFrom, replayedTurns) {
  if (typeof liveFrom === 'number' && liveFrom >= 0) return Math.min(liveFrom, messages.length);
  if (replayedTurns <= 0) return messages.length;
  const users = [];
  messages.forEach((m, i) => {
    if (m.role === 'user') users.push(i);
  });
  if (users.length <= replayedTurns) return 0;
  return users[users.length - replayedTurns];
}
