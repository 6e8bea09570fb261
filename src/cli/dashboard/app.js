/* agentrl dashboard — the page of `agentrl dashboard RUN_DIR...`; plain ES2017, no build step,
 * talking to the server's JSON API under /api/runs. Everything the server sends is arbitrary text
 * (run names, model responses, observations), so the DOM is built with createElement/textContent
 * only: there is no innerHTML in this file.
 * Sections: utilities · state and routing · runs · curves · trajectories · summary · polling. */
'use strict';

// ===== Utilities

const $ = (sel, root) => (root || document).querySelector(sel);
const POLL_MS = 5000;
const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2',
  '#17becf', '#7f7f7f', '#bcbd22'];
const GROUP_ORDER = ['eval', 'eval_sampled', 'rollout', 'actor', 'empg', 'gigpo', 'filter',
  'void_turn', 'time', 'perf', 'sft'];
const NO_DYGRAPH = "charts need Debian's libjs-dygraphs (scripts/setup.sh installs it)";

/** Builds an element. props: class, text, style (object), dataset, on<event>, other attributes.
 *  Children may be nodes or strings (strings become text nodes, never HTML). */
function el(tag, props, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v == null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = String(v);
    else if (k === 'style') Object.assign(e.style, v);
    else if (k === 'dataset') Object.assign(e.dataset, v);
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  appendKids(e, kids);
  return e;
}

function appendKids(e, kids) {   // nested arrays of children are flattened
  for (const c of kids) {
    if (Array.isArray(c)) appendKids(e, c);
    else if (c != null && c !== false) e.append(c instanceof Node ? c : String(c));
  }
}

function fmt(v, digits = 3) {
  if (v === null || v === undefined || v === '') return '—';
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  if (typeof v === 'object') return JSON.stringify(v);
  if (typeof v !== 'number') return String(v);
  if (!Number.isFinite(v)) return String(v);
  if (Number.isInteger(v) && Math.abs(v) < 1e9) return String(v);
  const a = Math.abs(v);
  if (a !== 0 && (a < 1e-3 || a >= 1e6)) return v.toExponential(2);
  return String(+v.toFixed(digits));
}

function fmtBytes(n) {
  if (typeof n !== 'number' || !Number.isFinite(n)) return '—';
  const i = n >= 1024 ? Math.min(4, Math.floor(Math.log2(n) / 10)) : 0;
  return (i ? (n / 2 ** (10 * i)).toFixed(1) : n) + ' ' + ['B', 'KiB', 'MiB', 'GiB', 'TiB'][i];
}

function fmtDur(s) {
  if (typeof s !== 'number' || !Number.isFinite(s)) return '—';
  if (s < 60) return s.toFixed(1) + ' s';
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = Math.round(s % 60);
  return h ? `${h}h ${String(m).padStart(2, '0')}m` : `${m}m ${String(sec).padStart(2, '0')}s`;
}

/** GET a JSON endpoint; throws an Error whose message names the URL and the server's error. */
async function getJSON(url) {
  let r;
  try { r = await fetch(url, { cache: 'no-store' }); } catch (e) { throw new Error(`${url}: ${e.message}`); }
  let body = null;
  try { body = await r.json(); } catch (e) { /* not JSON: reported below */ }
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status}${body && body.error ? ' — ' + body.error : ''}`);
  if (body === null || typeof body !== 'object') throw new Error(`${url}: the answer is not JSON`);
  return body;
}

/** A yellow notice box (class "problem") for the server's `problems` or a failed fetch. */
function problemBox(title, items) {
  const list = (Array.isArray(items) ? items : [items]).filter(x => x != null && x !== '');
  if (!list.length) return null;
  return el('div', { class: 'problem' }, title ? el('strong', { text: title }) : null,
    el('ul', {}, list.map(p => el('li', { text: p }))));
}

const setNotes = (container, boxes) => container.replaceChildren(...boxes.filter(Boolean));
const badge = (text, kind) => el('span', { class: 'badge ' + (kind || ''), text });

/** A <dl> of key → formatted value (estimator details, episode facts, run facts). */
function kvList(obj, cls) {
  const keys = Object.keys(obj || {});
  if (!keys.length) return null;
  return el('dl', { class: cls || 'kv' }, keys.map(k => [el('dt', { text: k }), el('dd', { text: fmt(obj[k], 4) })]));
}

// ===== State, ready flag and hash routing

const S = {
  view: 'curves', hash: null, nav: 0, pending: 0, polling: false,
  runs: [], runsSig: '', runsError: null,
  selected: null,             // Set of run ids overlaid on the curves (null: not decided yet)
  metrics: {},                // id -> {keys, rows, problems, error, sig}
  charts: {}, groups: {},     // metric key -> chart record; prefix -> group record
  smoothing: 0.6, log: false, filter: '',
  rollouts: {},               // run id -> /rollouts answer (or {error})
  episodes: {},               // "run/iter" -> /rollouts/{it} answer (or {error})
  traj: { run: null, iter: null, episode: null },
  tableSig: '', f: { type: '', success: '', group: '', batch: '' },
  episode: null,              // the opened /episodes/{index} answer
  colorBy: 'lp',
  summaries: {}, openCfg: new Set(),  // run id -> {sig, data|error}; runs whose config is open
};

/** The test waits for body[data-ready="1"]: "0" while any navigation is loading. */
function busy(promise) {
  S.pending++;
  document.body.dataset.ready = '0';
  const done = () => { if (--S.pending === 0) document.body.dataset.ready = '1'; };
  return promise.then(done, e => { done(); throw e; });
}

function parseHash() {
  const parts = location.hash.replace(/^#/, '').split('/').filter(Boolean);
  const view = ['curves', 'trajectories', 'summary'].includes(parts[0]) ? parts[0] : 'curves';
  const p = {};
  for (const s of parts.slice(1)) {
    const i = s.indexOf('=');
    if (i > 0) p[decodeURIComponent(s.slice(0, i))] = decodeURIComponent(s.slice(i + 1));
  }
  return { view, p };
}

function makeHash(view, params) {
  const kv = Object.entries(params || {}).filter(([, v]) => v !== null && v !== undefined && v !== '')
    .map(([k, v]) => `${k}=${encodeURIComponent(v)}`);
  return '#' + [view, ...kv].join('/');
}

function viewParams(view) {
  if (view === 'trajectories') return { run: S.traj.run, iter: S.traj.iter, episode: S.traj.episode };
  if (view === 'curves') return { runs: runsParam() };
  return {};
}

/** Writes the hash without triggering a second route (pushState fires no hashchange). */
function writeHash(view, replace) {
  const h = makeHash(view, viewParams(view));
  if (h !== location.hash) history[replace ? 'replaceState' : 'pushState'](null, '', h);
  S.hash = location.hash;
}

function navigate(view, params) {
  Object.assign(view === 'trajectories' ? S.traj : {}, params || {});
  history.pushState(null, '', makeHash(view, viewParams(view)));
  return route();
}

function onHashChange() { if (location.hash !== S.hash) route(); }

function showTab(view) {
  for (const v of ['curves', 'trajectories', 'summary']) {
    $('#view-' + v).hidden = v !== view;
    $('#tab-' + v).classList.toggle('active', v === view);
  }
}

async function route() {
  const { view, p } = parseHash();
  S.hash = location.hash;
  S.view = view;
  const seq = ++S.nav;
  showTab(view);
  await busy((async () => {
    if (!S.runs.length && !S.runsError) await loadRuns();
    if (p.runs !== undefined) {
      S.selected = new Set(p.runs.split(',').map(Number).filter(id => runById(id)));
      renderRuns();
    }
    if (view === 'curves') await showCurves();
    else if (view === 'trajectories') await showTrajectories(p, seq);
    else await showSummary();
  })().catch(e => $('#problems').append(problemBox('page error', e.stack || String(e)))));
}

// ===== Runs: the list in the header, selection for the curves, run-level problems

const runById = id => S.runs.find(r => r.id === id);
const runColor = id => PALETTE[((id % PALETTE.length) + PALETTE.length) % PALETTE.length];
const runLabel = r => `${r.id}: ${r.name}`;
const runSig = r => (r ? `${r.iterations}|${r.last_modified}` : '');   // changes when the run is written to

function selectedIds() {
  return S.runs.filter(r => r.is_run && S.selected && S.selected.has(r.id)).map(r => r.id);
}

/** The curves hash names the selection only when it differs from "all runs". */
function runsParam() {
  const all = S.runs.filter(r => r.is_run).map(r => r.id);
  const sel = selectedIds();
  return sel.length === all.length ? null : (sel.join(',') || 'none');
}

async function loadRuns() {
  try {
    const d = await getJSON('/api/runs');
    const before = new Set(S.runs.filter(r => r.is_run).map(r => r.id));
    S.runs = Array.isArray(d.runs) ? d.runs : [];
    S.runsError = null;
    if (!S.selected) S.selected = new Set(S.runs.filter(r => r.is_run).map(r => r.id));
    else S.runs.forEach(r => { if (r.is_run && !before.has(r.id)) S.selected.add(r.id); }); // became a run
  } catch (e) {
    S.runsError = e.message;
  }
  renderRuns();
}

function renderRuns() {
  const sig = JSON.stringify([S.runs, S.runsError, S.selected ? [...S.selected] : null]);
  if (sig === S.runsSig) return; // nothing changed: keep the DOM (and focus) as it is
  S.runsSig = sig;
  const now = Date.now() / 1000;
  $('#runs').replaceChildren(...S.runs.map(r => {
    const live = typeof r.last_modified === 'number' && now - r.last_modified < 120;
    if (!r.is_run) {
      return el('span', { class: 'run-chip not-run', title: r.path },
        el('span', { text: r.name }), badge('not a run', 'warn'));
    }
    const cb = el('input', { type: 'checkbox', onchange: () => toggleRun(r.id, cb.checked) });
    cb.checked = S.selected.has(r.id);
    return el('label', { class: 'run-chip', title: r.path },
      cb, el('span', { class: 'swatch', style: { background: runColor(r.id) } }),
      el('span', { class: 'run-name', text: r.name }),
      el('span', { class: 'muted', text: ` ${fmt(r.iterations)} it` }),
      live ? el('span', { class: 'live-dot', title: 'written to in the last 2 minutes' }) : null);
  }));
  $('#run-names').textContent = S.runs.map(r => r.name).join(' · ');
  const boxes = [S.runsError && problemBox('cannot list the runs', S.runsError)];
  for (const r of S.runs) {
    const probs = r.problems || [];
    const why = probs.length ? probs : 'no metrics.jsonl / config.yaml';
    if (!r.is_run) boxes.push(problemBox(`${r.path || r.name} is not a run`, why));
    else boxes.push(problemBox(`run ${r.name}`, probs));
  }
  setNotes($('#problems'), boxes);
}

async function toggleRun(id, on) {
  if (on) S.selected.add(id); else S.selected.delete(id);
  S.runsSig = '';
  renderRuns();
  if (S.view === 'curves') {
    writeHash('curves', true);
    await busy(showCurves());
  }
}

// ===== Curves: one small chart per metric key, grouped by prefix, one series per selected run.
// Charts are created lazily when they scroll into view (an IntersectionObserver), because a
// run can log a few hundred keys and drawing them all at once would stall the page.

const io = typeof IntersectionObserver === 'function'
  ? new IntersectionObserver(entries => entries.forEach(en => {
    const c = S.charts[en.target.dataset.key];
    if (c && en.isIntersecting && c.dirty) drawChart(en.target.dataset.key);
  }), { rootMargin: '300px' })
  : null;

/** metrics.jsonl can be megabytes: a poll re-reads it when /api/runs says the run changed, and
 *  every 30 s anyway (in case the server's last_modified does not follow appends). */
const metricsStale = id => !S.metrics[id] || S.metrics[id].error || S.metrics[id].runSig !== runSig(runById(id))
  || Date.now() - S.metrics[id].at > 30000;

async function loadMetrics(id, force) {
  if (S.metrics[id] && !S.metrics[id].error && !force) return;
  const stamp = { runSig: runSig(runById(id)), at: Date.now() };
  try {
    const d = await getJSON(`/api/runs/${id}/metrics`);
    const rows = Array.isArray(d.rows) ? d.rows : [];
    const last = rows[rows.length - 1];
    const sig = [rows.length, last && last.step, last && last.wall_time, (d.keys || []).length,
      (d.problems || []).join('\n')].join('|');
    if (S.metrics[id] && S.metrics[id].sig === sig) return Object.assign(S.metrics[id], stamp);
    S.metrics[id] = Object.assign({ keys: d.keys || [], rows, problems: d.problems || [], sig }, stamp);
  } catch (e) {
    S.metrics[id] = Object.assign({ keys: [], rows: [], problems: [], error: e.message, sig: 'error' }, stamp);
  }
  S.curvesDirty = true;
}

async function showCurves() {
  await Promise.all(selectedIds().map(id => loadMetrics(id, false)));
  S.curvesDirty = true;
  renderCurves();
}

const groupOf = key => (key.indexOf('/') > 0 ? key.slice(0, key.indexOf('/')) : '(no prefix)');

const groupRank = g => (GROUP_ORDER.includes(g) ? GROUP_ORDER.indexOf(g) : GROUP_ORDER.length);

function curveKeys() {
  const keys = new Set();
  for (const id of selectedIds()) (S.metrics[id] ? S.metrics[id].keys : []).forEach(k => keys.add(k));
  return [...keys].sort();
}

function renderCurves() {
  if (!S.curvesDirty) return;
  S.curvesDirty = false;
  const keys = curveKeys(), keep = new Set(keys);
  Object.keys(S.charts).filter(k => !keep.has(k)).forEach(removeChart);
  keys.forEach(ensureChart);
  for (const g of Object.values(S.groups)) g.count.textContent = `(${g.grid.children.length})`;
  applyFilter();
  redrawCharts();
  renderEvalTable();
  renderCurveNotes(keys);
}

function renderCurveNotes(keys) {
  const boxes = [];
  if (typeof window.Dygraph === 'undefined') boxes.push(problemBox(null, NO_DYGRAPH));
  if (!S.runs.some(r => r.is_run)) boxes.push(problemBox(null, 'no run to show'));
  else if (!selectedIds().length) boxes.push(problemBox(null, 'no run selected: tick one in the run list'));
  for (const id of selectedIds()) {
    const m = S.metrics[id], name = runById(id).name;
    if (!m) continue;
    if (m.error) boxes.push(problemBox(`metrics of ${name}`, m.error));
    boxes.push(problemBox(`metrics.jsonl of ${name}`, m.problems));
  }
  if (selectedIds().length && !keys.length && !boxes.length) boxes.push(problemBox(null, 'no metrics logged yet'));
  setNotes($('#curves-notes'), boxes);
}

function ensureGroup(name) {
  if (S.groups[name]) return S.groups[name];
  const count = el('span', { class: 'muted' });
  const grid = el('div', { class: 'chart-grid' });
  const det = el('details', { class: 'metric-group', open: true, dataset: { group: name } },
    el('summary', {}, el('span', { class: 'group-name', text: name }), ' ', count), grid);
  const root = $('#curves');
  const after = [...root.children].find(d => {
    const g = d.dataset.group;
    return groupRank(g) > groupRank(name) || (groupRank(g) === groupRank(name) && g > name);
  });
  root.insertBefore(det, after || null);
  return (S.groups[name] = { det, grid, count });
}

function ensureChart(key) {
  if (S.charts[key]) return;
  const grp = ensureGroup(groupOf(key));
  const plot = el('div', { class: 'plot' });
  const box = el('div', { class: 'chart', 'data-key': key },
    el('div', { class: 'chart-title', text: key, title: key }), plot);
  const after = [...grp.grid.children].find(b => b.dataset.key > key);
  grp.grid.insertBefore(box, after || null);
  S.charts[key] = { box, plot, g: null, dirty: true };
  if (io) io.observe(box);
}

function removeChart(key) {
  const c = S.charts[key];
  if (io) io.unobserve(c.box);
  if (c.g) c.g.destroy();
  c.box.remove();
  delete S.charts[key];
  for (const [name, g] of Object.entries(S.groups)) {
    if (!g.grid.children.length) { g.det.remove(); delete S.groups[name]; }
  }
}

/** One run's series for a key, as [step, value] sorted by step (a repeated step keeps the last
 *  row). A logged null (non-finite value) becomes NaN, which dygraphs draws as a gap; a step
 *  where the key was not logged is left out, so the line connects over it. */
function seriesOf(rows, key) {
  const byStep = new Map();
  for (const r of rows) {
    if (!r || !r.values || !(key in r.values)) continue;
    const v = r.values[key];
    byStep.set(Number(r.step), typeof v === 'number' ? v : NaN);
  }
  return [...byStep.entries()].sort((a, b) => a[0] - b[0]);
}

/** Exponential moving average with TensorBoard's debiasing; a gap restarts it. Sparse series
 *  (evaluations: a point every few iterations) are left as they are: averaging two evaluations
 *  would draw a value that was never measured. */
const MIN_POINTS_TO_SMOOTH = 10;
function smooth(points, w) {
  if (!(w > 0) || points.length < MIN_POINTS_TO_SMOOTH) return points;
  let acc = 0, n = 0;
  return points.map(([s, v]) => {
    if (!Number.isFinite(v)) { acc = 0; n = 0; return [s, v]; }
    acc = acc * w + (1 - w) * v;
    n++;
    return [s, acc / (1 - Math.pow(w, n))];
  });
}

/** Merges the selected runs' series for a key into dygraphs' [x, y1, y2, ...] rows. */
function chartData(key) {
  const ids = selectedIds().filter(id => S.metrics[id] && S.metrics[id].keys.includes(key));
  const byStep = new Map();
  ids.forEach((id, j) => {
    for (const [s, v] of smooth(seriesOf(S.metrics[id].rows, key), S.smoothing)) {
      if (!byStep.has(s)) byStep.set(s, new Array(ids.length).fill(null));
      byStep.get(s)[j] = v;
    }
  });
  const data = [...byStep.entries()].sort((a, b) => a[0] - b[0]).map(([s, vals]) => [s, ...vals]);
  return { data, labels: ['step', ...ids.map(id => runLabel(runById(id)))], colors: ids.map(runColor), ids };
}

/** Legend as a DocumentFragment (built with textContent) rather than dygraphs' HTML string. */
function legendFormatter(data) {
  const frag = document.createDocumentFragment();
  if (data.x === undefined || data.x === null) return frag;
  frag.append(el('div', { class: 'lg-x', text: `step ${data.x}` }));
  for (const s of data.series) {
    if (!s.isVisible || typeof s.y !== 'number') continue;
    frag.append(el('div', {}, el('span', { class: 'swatch', style: { background: s.color } }),
      ` ${s.label}: ${fmt(s.y, 4)}`));
  }
  return frag;
}

function drawChart(key) {
  const c = S.charts[key];
  c.dirty = false;
  const { data, labels, colors, ids } = chartData(key);
  if (typeof window.Dygraph === 'undefined') {   // no charts: show the last value of each run
    c.plot.replaceChildren(...ids.map((id, j) => {
      const last = data.filter(r => Number.isFinite(r[j + 1])).pop();
      return el('div', { class: 'nochart' }, el('span', { class: 'swatch', style: { background: colors[j] } }),
        ` ${labels[j + 1]}: ${last ? `${fmt(last[j + 1], 4)} at step ${last[0]}` : '—'}`);
    }));
    return;
  }
  if (!data.length) { if (c.g) { c.g.destroy(); c.g = null; } c.plot.replaceChildren(); return; }
  const opts = { file: data, labels, colors, logscale: S.log, drawPoints: data.length <= 30 };
  try {
    if (c.g) c.g.updateOptions(opts);
    else {
      c.g = new window.Dygraph(c.plot, data, Object.assign({}, opts, {
        connectSeparatedPoints: true, legend: 'follow', legendFormatter, labelsSeparateLines: true,
        strokeWidth: 1.5, pointSize: 2, highlightCircleSize: 3, axisLabelFontSize: 10,
        xAxisHeight: 16, yAxisLabelWidth: 44, xRangePad: 4, yRangePad: 6,
        axes: { y: { valueFormatter: v => fmt(v, 4), axisLabelFormatter: v => fmt(v, 3) } },
      }));
    }
  } catch (e) {
    c.plot.replaceChildren(problemBox(null, `chart error: ${e.message}`));
    c.g = null;
  }
}

/** Marks every chart stale and draws the ones on screen now (so they are there when the page
 *  says ready); the others are drawn by the observer when they scroll into view. */
function redrawCharts() {
  const near = Object.keys(S.charts).filter(k => {
    const c = S.charts[k];
    c.dirty = true;
    const r = c.box.getBoundingClientRect();
    return !io || (r.height > 0 && r.bottom > -300 && r.top < window.innerHeight + 300);
  });
  near.forEach(drawChart);
}

function applyFilter() {
  const words = S.filter.toLowerCase().split(/\s+/).filter(Boolean);
  for (const [k, c] of Object.entries(S.charts)) {
    c.box.hidden = !words.every(w => k.toLowerCase().includes(w));
  }
  for (const g of Object.values(S.groups)) g.det.hidden = ![...g.grid.children].some(b => !b.hidden);
}

/** The evaluations table: one row per run and per step where eval/success_rate was logged. */
function renderEvalTable() {
  const table = $('#eval-table');
  const ids = selectedIds().filter(id => S.metrics[id]);
  const types = { eval: new Set(), eval_sampled: new Set() };
  for (const id of ids) {
    for (const k of S.metrics[id].keys) {
      const m = /^(eval|eval_sampled)\/success\/(.+)$/.exec(k);
      if (m) types[m[1]].add(m[2]);
    }
  }
  const hasSampled = ids.some(id => S.metrics[id].keys.some(k => k.startsWith('eval_sampled/')));
  const cols = [['eval/success_rate', 'overall'], ...[...types.eval].sort().map(t => [`eval/success/${t}`, t])];
  const scols = hasSampled
    ? [['eval_sampled/success_rate', 'overall'], ...[...types.eval_sampled].sort().map(t => [`eval_sampled/success/${t}`, t])]
    : [];
  const head = el('thead', {},
    el('tr', {}, el('th', { rowspan: 2, text: 'run' }), el('th', { rowspan: 2, text: 'step' }),
      el('th', { colspan: cols.length, class: 'grp', text: 'eval (greedy)' }),
      scols.length ? el('th', { colspan: scols.length, class: 'grp', text: 'eval_sampled' }) : null),
    el('tr', {}, [...cols, ...scols].map(([k, t]) => el('th', { text: t, title: k }))));
  const body = el('tbody');
  for (const id of ids) {
    for (const r of S.metrics[id].rows) {
      if (!r || !r.values || !('eval/success_rate' in r.values)) continue;
      body.append(el('tr', {},
        el('td', {}, el('span', { class: 'swatch', style: { background: runColor(id) } }), ' ' + runById(id).name),
        el('td', { class: 'num', text: r.step }),
        [...cols, ...scols].map(([k]) => rateCell(r.values[k]))));
    }
  }
  if (!body.children.length) {
    const span = 2 + cols.length + scols.length;
    body.append(el('tr', {}, el('td', { colspan: span, class: 'muted', text: 'no evaluation logged yet' })));
  }
  table.replaceChildren(head, body);
}

function rateCell(v) {
  const td = el('td', { class: 'num', text: typeof v === 'number' ? (v * 100).toFixed(1) + '%' : fmt(v) });
  if (typeof v === 'number' && v >= 0 && v <= 1) td.style.background = `rgba(46, 160, 67, ${(0.05 + 0.4 * v).toFixed(3)})`;
  return td;
}

function setupCurveControls() {
  let pending = 0;
  const later = fn => { cancelAnimationFrame(pending); pending = requestAnimationFrame(fn); };
  $('#smoothing').addEventListener('input', e => {
    S.smoothing = Number(e.target.value);
    $('#smoothing-value').textContent = S.smoothing.toFixed(2);
    later(redrawCharts);
  });
  $('#logscale').addEventListener('change', e => { S.log = e.target.checked; redrawCharts(); });
  $('#key-filter').addEventListener('input', e => { S.filter = e.target.value; later(applyFilter); });
  $('#expand-all').addEventListener('click', () => Object.values(S.groups).forEach(g => { g.det.open = true; }));
  $('#collapse-all').addEventListener('click', () => Object.values(S.groups).forEach(g => { g.det.open = false; }));
}

// ===== Trajectories: run → iteration → episode list (filters) → one episode, its turns and tokens,
// and the other episodes of its group (what GRPO compares).

/** Cached GET: the answer (or {error}) is kept in store[key]; errors are retried next time. */
async function cachedJSON(store, key, url, force) {
  if (!store[key] || store[key].error || force) {
    try { store[key] = await getJSON(url); } catch (e) { store[key] = { error: e.message }; }
  }
  return store[key];
}
const loadRollouts = (run, force) => cachedJSON(S.rollouts, run, `/api/runs/${run}/rollouts`, force);
const loadEpisodes = (run, iter, force) => cachedJSON(S.episodes, `${run}/${iter}`, `/api/runs/${run}/rollouts/${iter}`, force);

const iterList = ro => (ro && Array.isArray(ro.iterations) ? ro.iterations : []);

function fillSelect(sel, options, value) {
  const sig = JSON.stringify(options);
  if (sel.dataset.sig !== sig) {
    sel.replaceChildren(...options.map(([v, t]) => el('option', { value: v, text: t })));
    sel.dataset.sig = sig;
  }
  sel.value = value === null || value === undefined ? '' : String(value);
}

function fillIterSelect(ro) {
  fillSelect($('#traj-iter'), iterList(ro).map(it =>
    [it.iteration, `${it.iteration} (${fmt(it.episodes)} episodes${it.has_advantages ? '' : ', no advantages'})`]), S.traj.iter);
}

function clearEpisode(msg) {
  S.episode = null;
  $('#group').replaceChildren();
  $('#episode').replaceChildren(el('p', { class: 'muted', text: msg || 'Pick an episode from the list.' }));
}

async function showTrajectories(p, seq) {
  const notes = $('#traj-notes');
  const runs = S.runs.filter(r => r.is_run);
  fillSelect($('#traj-run'), runs.map(r => [r.id, runLabel(r)]), null);
  const boxes = [];
  if (!runs.length) { setNotes(notes, [problemBox(null, 'no run to show')]); return; }
  let run = p.run !== undefined ? Number(p.run) : S.traj.run;
  if (!runs.some(r => r.id === run)) {
    if (p.run !== undefined) boxes.push(problemBox(null, `run ${p.run} is not a run of this dashboard`));
    run = runs[0].id;
  }
  if (run !== S.traj.run) S.tableSig = '';
  S.traj.run = run;
  $('#traj-run').value = String(run);

  const ro = await loadRollouts(run, false);
  if (seq !== S.nav) return;
  boxes.push(problemBox('rollouts', ro.error), problemBox('rollouts', ro.problems));
  const iters = iterList(ro).map(it => it.iteration);
  let iter = p.iter !== undefined ? Number(p.iter) : S.traj.iter;
  if (!iters.includes(iter)) {
    const msg = `iteration ${p.iter} has no rollouts; showing the last one`;
    if (p.iter !== undefined && !ro.error) boxes.push(problemBox(null, msg));
    iter = iters.length ? iters[iters.length - 1] : null;
  }
  S.traj.iter = iter;
  fillIterSelect(ro);
  setNotes(notes, boxes);
  if (iter === null) {
    if (!ro.error) notes.append(problemBox(null, 'no rollouts written yet'));
    $('#episodes').replaceChildren(); clearEpisode(' '); writeHash('trajectories', true);
    return;
  }

  const eps = await loadEpisodes(run, iter, false);
  if (seq !== S.nav) return;
  notes.append(...[problemBox(`iteration ${iter}`, eps.error), problemBox(`iteration ${iter}`, eps.problems)].filter(Boolean));
  S.traj.episode = p.episode !== undefined && p.episode !== '' ? Number(p.episode) : null;
  renderEpisodeTable();
  if (S.traj.episode === null || !Number.isFinite(S.traj.episode)) { S.traj.episode = null; clearEpisode(); }
  else if (!S.episode || S.episode.key !== `${run}/${iter}/${S.traj.episode}`) await openEpisode(run, iter, S.traj.episode, seq);
  if (seq === S.nav) writeHash('trajectories', true);
}

function episodeFilter(e) {
  const f = S.f;
  if (f.type && e.task_type !== f.type) return false;
  if (f.success && Boolean(e.success) !== (f.success === '1')) return false;
  if (f.group !== '' && String(e.group_id) !== String(f.group)) return false;
  if (f.batch && Boolean(e.in_batch) !== (f.batch === '1')) return false;
  return true;
}

function renderEpisodeTable() {
  const eps = S.episodes[`${S.traj.run}/${S.traj.iter}`];
  const list = eps && Array.isArray(eps.episodes) ? eps.episodes : [];
  const types = [...new Set(list.map(e => e.task_type))].sort();
  if (!types.includes(S.f.type)) S.f.type = '';
  fillSelect($('#f-type'), [['', 'all'], ...types.map(t => [t, t])], S.f.type);
  const sig = JSON.stringify([S.traj.run, S.traj.iter, S.f, list.length, eps && eps.problems]);
  if (sig !== S.tableSig) {
    S.tableSig = sig;
    const shown = list.filter(episodeFilter);
    $('#episode-count').textContent = `${shown.length} of ${list.length}`;
    const cols = ['episode', 'grp', 'smp', 'task type', 'reward', 'ok', 'turns', 'inv', 'void', 'adv'];
    $('#episodes').replaceChildren(
      el('thead', {}, el('tr', {}, cols.map(c => el('th', { text: c })))),
      el('tbody', {}, shown.map(episodeRow)));
  }
  markSelectedRow();
}

function episodeRow(e) {
  const cells = [[e.episode_id, 'mono'], [fmt(e.group_id), 'num'], [fmt(e.sample_index), 'num'], [e.task_type || '—'],
    [fmt(e.reward), 'num'], [e.success ? '✓' : '✗'], [fmt(e.turns), 'num'], [fmt(e.invalid_turns), 'num'],
    [fmt(e.void_turns), 'num'], [fmt(e.advantage_mean), 'num']];
  return el('tr', {
    class: 'episode-row' + (e.success ? ' ok' : ' fail') + (e.in_batch === false ? ' dropped' : ''),
    'data-index': e.index, title: e.task_id || '', onclick: () => navigate('trajectories', { episode: e.index }),
  }, cells.map(([text, cls]) => el('td', { class: cls, text })));
}

function markSelectedRow() {
  document.querySelectorAll('#episodes .episode-row').forEach(tr => {
    tr.classList.toggle('selected', Number(tr.dataset.index) === S.traj.episode);
  });
}

async function openEpisode(run, iter, index, seq) {
  $('#episode').replaceChildren(el('p', { class: 'muted', text: `loading episode ${index}…` }));
  let d;
  try { d = await getJSON(`/api/runs/${run}/rollouts/${iter}/episodes/${index}`); } catch (e) { d = { error: e.message }; }
  if (seq !== S.nav) return;
  if (d.error || !d.episode) {
    S.episode = null;
    $('#group').replaceChildren();
    setNotes($('#episode'), [problemBox(`episode ${index}`, d.error || 'the answer has no episode')]);
    return;
  }
  d.key = `${run}/${iter}/${index}`;
  S.episode = d;
  renderEpisode(d);
}

function renderEpisode(d) {
  const ep = d.episode;
  const turns = Array.isArray(ep.turns) ? ep.turns : [];
  const box = $('#episode');
  box.replaceChildren(problemBox('episode', d.problems) || '', episodeHeader(ep, turns.length));
  turns.forEach((t, i) => box.append(renderTurn(t, i)));
  if (!turns.length) box.append(el('p', { class: 'muted', text: 'this episode has no turns' }));
  renderGroup(d.group || [], ep);
  recolor();
}

function episodeHeader(ep, nTurns) {
  const flags = [
    badge(ep.success ? 'success' : 'fail', ep.success ? 'good' : 'bad'),
    ep.in_batch === false ? badge('not in batch', 'warn') : ep.in_batch ? badge('in batch') : null,
    ep.truncated && badge('truncated', 'warn'), ep.failed && badge('failed', 'bad'),
    ep.loss_masked && badge('loss masked', 'warn'),
  ];
  const facts = {
    'task type': ep.task_type, 'task id': ep.task_id, group: ep.group_id, sample: ep.sample_index,
    reward: ep.reward, score: ep.score, turns: nTurns, 'context mode': ep.context_mode,
  };
  const metrics = ep.metrics && Object.keys(ep.metrics).length
    ? el('details', { class: 'block' }, el('summary', { text: 'episode metrics' }), kvList(ep.metrics)) : null;
  return el('div', { class: 'episode-head' },
    el('h2', {}, 'episode ', el('span', { class: 'mono', text: ep.episode_id }), ' ', flags),
    kvList(facts, 'kv facts'),
    ep.error ? el('div', { class: 'problem error' }, el('strong', { text: 'error: ' }),
      el('span', { class: 'pre', text: ep.error })) : null,
    metrics);
}

function renderTurn(t, i) {
  const obs = typeof t.observation_before === 'string' ? t.observation_before : '';
  const tool = t.tool_output ? String(t.tool_output) : '';
  const tokens = Array.isArray(t.tokens) ? t.tokens : [];
  const flags = [t.invalid_action && badge('invalid action', 'bad'), t.void_turn && badge('void turn', 'warn'),
    t.truncated && badge('truncated', 'warn'), t.finish_reason && badge(t.finish_reason, 'plain')];
  const stats = ` reward ${fmt(t.reward, 4)} · advantage ${fmt(t.advantage, 4)} · context ${fmt(t.n_context)} tok`
    + ` · generated ${fmt(t.n_generated)} tok`;
  const hasDetails = t.details && typeof t.details === 'object' && Object.keys(t.details).length;
  return el('div', { class: 'turn', dataset: { adv: typeof t.advantage === 'number' ? t.advantage : '' } },
    el('div', { class: 'turn-head' }, el('strong', { text: `turn ${i}` }), ' ', flags, el('span', { class: 'muted', text: stats })),
    el('details', { class: 'obs' },   // the context can be long: closed, with its last line as a preview
      el('summary', {}, `observation / context (${obs.length} chars) `,
        el('span', { class: 'muted mono', text: obs.trim().split('\n').pop().slice(-140) })),
      el('pre', { class: 'text', text: obs })),
    el('div', { class: 'label', text: tokens.length ? `response (${tokens.length} tokens)` : 'response' }),
    tokens.length ? el('div', { class: 'response mono' }, tokens.map(tk => tokenSpan(tk, t.advantage)))
      : el('div', { class: 'response mono plain', text: t.response || '' }),
    el('div', { class: 'turn-foot' }, el('span', { class: 'label', text: 'action ' }),
      el('code', { class: 'action', text: t.action === undefined || t.action === '' ? '(none)' : String(t.action) })),
    el('details', { class: 'tool', open: tool.length > 0 && tool.length < 2000 },
      el('summary', { text: `tool output / env result (${tool.length} chars)` }),
      el('pre', { class: 'text', text: tool || '(empty)' })),
    hasDetails ? el('div', { class: 'details' }, el('span', { class: 'label', text: 'estimator details' }), kvList(t.details)) : null);
}

function tokenSpan(tok, adv) {
  const lp = typeof tok.lp === 'number' ? tok.lp : null;
  const h = typeof tok.h === 'number' ? tok.h : null;
  const text = tok.t === null || tok.t === undefined ? '' : String(tok.t);
  const tip = [JSON.stringify(text), lp === null ? 'log-prob —' : `log-prob ${lp.toFixed(3)} (p ${Math.exp(lp).toFixed(3)})`,
    h === null ? 'entropy —' : `entropy ${h.toFixed(3)}`, `turn advantage ${fmt(adv, 4)}`].join('\n');
  return el('span', { class: 'tok', 'data-lp': lp === null ? '' : lp, 'data-h': h === null ? '' : h, title: tip, text });
}

/** Token colours: log-prob low = red; entropy high = orange→red; advantage red ↔ white ↔ green. */
const alpha = a => Math.max(0, Math.min(1, a)).toFixed(3);
const colorLp = lp => (Number.isFinite(lp) ? `rgba(230, 40, 40, ${alpha(0.85 * (1 - Math.exp(Math.min(0, lp))))})` : 'transparent');
function colorH(h) {
  const a = Math.min(Math.max(h, 0) / 2.5, 1);   // 2.5 nats and above: full red
  return Number.isFinite(h) ? `hsla(${Math.round(35 - 35 * a)}, 100%, 50%, ${alpha(0.85 * a)})` : 'transparent';
}
function colorAdv(adv, scale) {
  if (!Number.isFinite(adv)) return 'transparent';
  const x = adv / scale;
  return x >= 0 ? `rgba(40, 167, 69, ${alpha(0.75 * x)})` : `rgba(220, 53, 69, ${alpha(-0.75 * x)})`;
}

/** The advantage scale is the largest |advantage| of the group (this episode's turns and the
 *  members' means), so that the members of one group are coloured comparably. */
function advScale() {
  const vals = [...document.querySelectorAll('#episode .turn')].map(t => parseFloat(t.dataset.adv))
    .concat(((S.episode && S.episode.group) || []).map(g => g.advantage_mean));
  const m = Math.max(0, ...vals.filter(Number.isFinite).map(Math.abs));
  return m > 0 ? m : 1;
}

function recolor() {
  const mode = S.colorBy, scale = advScale();
  document.querySelectorAll('#episode .turn').forEach(turn => {
    const adv = parseFloat(turn.dataset.adv);
    turn.querySelectorAll('.tok').forEach(s => {
      s.style.backgroundColor = mode === 'lp' ? colorLp(parseFloat(s.dataset.lp))
        : mode === 'h' ? colorH(parseFloat(s.dataset.h)) : colorAdv(adv, scale);
    });
    const plain = turn.querySelector('.response.plain');   // no tokens recorded: tint the whole text
    if (plain) plain.style.backgroundColor = mode === 'adv' ? colorAdv(adv, scale) : '';
  });
  $('#color-legend').textContent = { lp: 'red = low probability, clear = confident',
    h: 'orange → red = high entropy (≥ 2.5 nats)', adv: `red < 0 < green, full colour at ±${fmt(scale, 3)}` }[mode];
}

/** The group panel: every episode of the same group_id — what GRPO normalises rewards over. */
function renderGroup(group, ep) {
  const rewards = group.map(g => g.reward).filter(r => typeof r === 'number');
  const mean = rewards.reduce((a, b) => a + b, 0) / (rewards.length || 1);
  const std = Math.sqrt(rewards.reduce((a, b) => a + (b - mean) * (b - mean), 0) / (rewards.length || 1));
  const open = g => navigate('trajectories', { episode: g.index });
  const cards = group.slice().sort((a, b) => a.sample_index - b.sample_index).map(g => el('div', {
    class: 'member' + (g.index === ep.index ? ' current' : ''), 'data-index': g.index, tabindex: 0, role: 'button',
    title: g.episode_id, onclick: () => open(g), onkeydown: e => { if (e.key === 'Enter') open(g); },
  },
  el('div', { class: 'member-title' }, `#${fmt(g.sample_index)} `, g.success ? badge('✓', 'good') : badge('✗', 'bad')),
  el('div', { text: `reward ${fmt(g.reward)}` }), el('div', { text: `${fmt(g.turns)} turns` }),
  el('div', { text: `adv ${fmt(g.advantage_mean)}`, style: { background: colorAdv(g.advantage_mean, advScale()) } })));
  const onlyThis = () => { S.f.group = String(ep.group_id); $('#f-group').value = S.f.group; renderEpisodeTable(); };
  $('#group').replaceChildren(
    el('div', { class: 'group-head', title: 'GRPO compares these episodes: advantages are normalised within the group' },
      el('strong', { text: `group ${fmt(ep.group_id)}` }),
      el('span', { class: 'muted', text: ` · ${group.length} episodes · reward mean ${fmt(mean)} std ${fmt(std)} ` }),
      el('button', { type: 'button', text: 'list only this group', onclick: onlyThis })),
    el('div', { class: 'members' }, cards));
}

function setupTrajectoryControls() {
  $('#traj-run').addEventListener('change', e => {
    S.traj = { run: Number(e.target.value), iter: null, episode: null };
    navigate('trajectories');
  });
  $('#traj-iter').addEventListener('change', e => navigate('trajectories', { iter: Number(e.target.value), episode: null }));
  $('#color-by').addEventListener('change', e => { S.colorBy = e.target.value; recolor(); });
  const bind = (id, field) => $(id).addEventListener(id === '#f-group' ? 'input' : 'change', e => {
    S.f[field] = e.target.value.trim();
    renderEpisodeTable();
  });
  bind('#f-type', 'type'); bind('#f-success', 'success'); bind('#f-group', 'group'); bind('#f-batch', 'batch');
}

// ===== Summary: per run, estimator/env/filters/model, time split, checkpoints, reproduce, config.

/** Re-fetches a run's summary when the run changed; true when the answer differs from before. */
async function loadSummary(r) {
  const old = S.summaries[r.id];
  if (old && !old.error && old.sig === runSig(r)) return false;
  let s;
  try {
    s = { sig: runSig(r), data: await getJSON(`/api/runs/${r.id}/summary`) };
  } catch (e) {
    s = { sig: '', error: e.message };
  }
  S.summaries[r.id] = s;
  return !old || JSON.stringify([old.data, old.error]) !== JSON.stringify([s.data, s.error]);
}

async function showSummary(fromPoll) {
  const changed = await Promise.all(S.runs.filter(r => r.is_run).map(loadSummary));
  const box = $('#summary');
  if (fromPoll && !changed.some(Boolean) && box.children.length) return;   // keep scroll and selection
  box.replaceChildren(...S.runs.map(r => (r.is_run ? summaryCard(r)
    : el('div', { class: 'card' }, el('h2', { text: r.name }), el('div', { class: 'muted', text: r.path }),
      problemBox('not a run', (r.problems || []).length ? r.problems : 'no metrics.jsonl / config.yaml')))));
  if (!S.runs.length) box.append(problemBox(null, 'no run to show'));
}

function summaryCard(r) {
  const s = S.summaries[r.id] || {};
  const head = [el('h2', {}, el('span', { class: 'swatch', style: { background: runColor(r.id) } }), ' ', r.name),
    el('div', { class: 'muted mono', text: r.path })];
  if (s.error || !s.data) return el('div', { class: 'card' }, head, problemBox('summary', s.error || 'not loaded'));
  const d = s.data;
  const filters = Array.isArray(d.filters) ? (d.filters.length ? d.filters.join(', ') : 'none') : fmt(d.filters);
  const facts = { estimator: d.estimator, env: d.env, filters, model: d.model, iterations: d.iterations };
  const toggle = e => (e.target.open ? S.openCfg.add(r.id) : S.openCfg.delete(r.id));
  return el('div', { class: 'card' }, head, problemBox('problems', d.problems),
    kvList(facts, 'kv facts'),
    el('h3', { text: 'time' }), timeSplit(d.time_s || {}),
    el('h3', { text: 'checkpoints' }), checkpointTable(d.checkpoints),
    el('h3', { text: 'reproduce' }), reproduceLine(d.reproduce),
    el('details', { class: 'block', open: S.openCfg.has(r.id), ontoggle: toggle },
      el('summary', { text: 'config.yaml (resolved)' }), el('pre', { class: 'text', text: d.config_yaml || '(empty)' })));
}

function timeSplit(t) {
  const num = k => (typeof t[k] === 'number' && Number.isFinite(t[k]) ? t[k] : null);
  const parts = [['rollout', '#1f77b4'], ['old_logprob', '#9467bd'], ['update', '#ff7f0e'], ['other', '#7f7f7f']];
  const total = num('total') || parts.reduce((a, [k]) => a + (num(k) || 0), 0);
  const pct = v => (total > 0 && v !== null ? (100 * v / total).toFixed(1) + '%' : '');
  const bar = el('div', { class: 'timebar' }, parts.map(([k, c]) => (num(k) > 0 && total > 0
    ? el('span', { title: `${k}: ${fmtDur(num(k))} (${pct(num(k))})`, style: { width: pct(num(k)), background: c } }) : null)));
  const row = (k, v, c) => el('tr', { class: c ? null : 'total' },
    el('td', {}, c ? el('span', { class: 'swatch', style: { background: c } }) : null, ' ' + k),
    el('td', { class: 'num', text: fmtDur(v) }), el('td', { class: 'num', text: v === null ? '—' : fmt(v, 1) + ' s' }),
    el('td', { class: 'num', text: c ? pct(v) : '' }));
  return el('div', { class: 'timesplit' }, bar,
    el('table', { class: 'data compact' }, el('tbody', {}, parts.map(([k, c]) => row(k, num(k), c)), row('total', total))));
}

function checkpointTable(cks) {
  if (!Array.isArray(cks) || !cks.length) return el('p', { class: 'muted', text: 'no checkpoint yet' });
  return el('table', { class: 'data compact' },
    el('thead', {}, el('tr', {}, ['name', 'iteration', 'size'].map(h => el('th', { text: h })))),
    el('tbody', {}, cks.map(c => el('tr', {}, el('td', { class: 'mono', text: c.name }),
      el('td', { class: 'num', text: fmt(c.iteration) }), el('td', { class: 'num', text: fmtBytes(c.bytes) })))));
}

function reproduceLine(cmd) {
  const code = el('code', { class: 'reproduce', text: cmd || '' });
  const btn = el('button', { type: 'button', text: 'copy', onclick: async () => {
    try { await navigator.clipboard.writeText(cmd || ''); btn.textContent = 'copied'; } catch (e) {
      const range = document.createRange(); range.selectNodeContents(code);   // select it for ctrl-c
      const sel = window.getSelection(); sel.removeAllRanges(); sel.addRange(range);
      btn.textContent = 'selected: press ctrl-c';
    }
    setTimeout(() => { btn.textContent = 'copy'; }, 2000);
  } });
  return el('div', { class: 'reproduce-line' }, code, btn);
}

// ===== Polling: follow a live run. Every 5 s re-read the run list and what the current view shows,
// then update in place (charts via updateOptions, tables only when their content changed), so
// the user's scroll position, open sections and selection stay as they are.

async function poll() {
  if (S.polling || S.pending || document.hidden) return;
  S.polling = true;
  try {
    const hadRuns = S.runs.length;
    await loadRuns();
    if (!hadRuns && S.runs.length) await route();   // the server answered for the first time
    else if (S.view === 'curves') {
      await Promise.all(selectedIds().filter(metricsStale).map(id => loadMetrics(id, true)));
      renderCurves();
    } else if (S.view === 'trajectories') {
      await refreshTrajectories();
    } else {
      await showSummary(true);
    }
    $('#live').textContent = S.runsError ? 'server unreachable' : `updated ${new Date().toLocaleTimeString()}`;
  } catch (e) {
    $('#live').textContent = `update failed: ${e.message}`;
  } finally {
    S.polling = false;
  }
}

async function refreshTrajectories() {
  const { run, iter } = S.traj;
  if (run === null) return;
  const old = S.rollouts[run];
  const ro = await loadRollouts(run, true);
  if (S.view !== 'trajectories' || S.traj.run !== run) return;
  fillIterSelect(ro);
  if (iter === null) { if (iterList(ro).length) navigate('trajectories', {}); return; }  // first rollouts appeared
  const count = r => (iterList(r).find(it => it.iteration === iter) || {}).episodes;
  if (count(old) !== count(ro)) {
    await loadEpisodes(run, iter, true);
    if (S.traj.run === run && S.traj.iter === iter) renderEpisodeTable();
  }
}

// ===== Start

function init() {
  for (const v of ['curves', 'trajectories', 'summary']) {
    $('#tab-' + v).addEventListener('click', () => {
      if (S.view !== v || location.hash !== makeHash(v, viewParams(v))) navigate(v);
    });
  }
  setupCurveControls();
  setupTrajectoryControls();
  window.addEventListener('hashchange', onHashChange);
  window.addEventListener('popstate', onHashChange);
  route();
  setInterval(poll, POLL_MS);
}

init();
