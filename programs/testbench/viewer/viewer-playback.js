/* kinesync replay viewer: frame changes and playback, markers, the readouts and the view toggles.
 * (After viewer-state.js; the order: viewer-state.js.) */
'use strict';

// ---------------------------------------------------------------------------------------------
// Frame changes and playback

function applyFrame(f, force) {
  f = clampFrame(f);
  if (f === frame && !force) return;
  frame = f;
  api.frame = f;
  sceneDirty = true;
  followTarget();
  updateReadouts();
  drawTimeline();
  writeState();
  requestRender();
}

function setFrame(f) {
  if (!api.ready) return;
  applyFrame(f);
}

function play() {
  if (!api.ready || playing) return;
  if (frame >= F - 1) applyFrame(0);
  playing = true;
  acc = 0;
  lastNow = 0;
  updatePlayButton();
  schedule();
}

function pause() {
  if (!playing) return;
  playing = false;
  updatePlayButton();
  updateReadouts();
}

function togglePlay() { if (playing) pause(); else play(); }

function step(n) {
  pause();
  applyFrame(frame + n);
}

function setSpeed(v) {
  speed = v;
  var sel_ = $('speed');
  if (sel_) sel_.value = String(v);
  updateReadouts();
}

function nudgeSpeed(dir) {
  var i = SPEEDS.indexOf(speed);
  if (i < 0) i = SPEEDS.indexOf(1);
  i = Math.max(0, Math.min(SPEEDS.length - 1, i + dir));
  setSpeed(SPEEDS[i]);
}

function updatePlayButton() {
  var b = $('btn-play');
  if (!b) return;
  b.textContent = playing ? '\u275A\u275A' : '\u25B6';
  b.classList.toggle('on', playing);
}

// Markers for "previous / next marker": pops of the shown strategies, epoch changes, blackouts.
var markerFrames = [];

function rebuildMarkers() {
  var set = {};
  epochs.forEach(function (e) { set[timeFrame(e.t)] = 1; });
  blackouts.forEach(function (b) { set[timeFrame(b[0])] = 1; });
  streams.forEach(function (st) {
    if (st.isTruth || !st.shown) return;
    popsOf(st).forEach(function (t) { set[timeFrame(t)] = 1; });
  });
  markerFrames = Object.keys(set).map(Number).sort(function (a, b) { return a - b; });
}

function jumpMarker(dir) {
  pause();
  var i;
  if (dir > 0) {
    for (i = 0; i < markerFrames.length; i++) if (markerFrames[i] > frame) return applyFrame(markerFrames[i]);
  } else {
    for (i = markerFrames.length - 1; i >= 0; i--) if (markerFrames[i] < frame) return applyFrame(markerFrames[i]);
  }
}

// The strategy's pops of the selected character (every character's when the file does not say
// whose each pop is).
function popsOf(st) {
  var p = meta.pops && meta.pops[st.name];
  if (!Array.isArray(p)) return [];
  var who = meta.pop_characters && meta.pop_characters[st.name];
  if (!Array.isArray(who) || who.length !== p.length) return p;
  return p.filter(function (t, i) { return who[i] === sel; });
}

// ---------------------------------------------------------------------------------------------
// Readouts

function fmt(v, digits) {
  if (typeof v !== 'number' || !isFinite(v)) return '\u2014';
  return v.toFixed(digits);
}

function plural(n, word) { return n + ' ' + word + (n === 1 ? '' : 's'); }

// cm: one decimal below 100, none above (the table stays narrow when a teleport costs metres).
function fmtCm(v) { return typeof v === 'number' && Math.abs(v) >= 99.95 ? fmt(v, 0) : fmt(v, 1); }

function pct(v) { return typeof v === 'number' ? +(v * 100).toFixed(2) + ' %' : '\u2014'; }

// The newest snapshot the client had decoded by time t (net_graph style).
function snapshotAt(t) {
  var a = snaps.arrival, lo = 0, hi = a.length;
  while (lo < hi) { var mid = (lo + hi) >> 1; if (a[mid] <= t) lo = mid + 1; else hi = mid; }
  if (lo === 0) return null;
  var i = lo - 1, n = 0;
  for (var k = i; k >= 0 && a[k] > t - 1; k--) n++;
  return { age: t - snaps.tickMax[i], since: t - a[i], lat: snaps.lat[i], perSecond: n };
}

function setText(el, text) { if (el && el.textContent !== text) el.textContent = text; }

function updateReadouts() {
  var t = frameTime(frame);
  setText($('clock'), 'frame ' + frame + ' / ' + (F - 1) + '   t ' + t.toFixed(3) + ' s   ' +
    (speed !== 1 ? speed + '\u00d7' : '1\u00d7'));
  var snap = snapshotAt(t);
  var net = snap ? 'snapshot ' + Math.round(snap.age * 1000) + ' ms old (arrived ' + Math.round(snap.since * 1000) +
    ' ms ago, ' + Math.round(snap.lat * 1000) + ' ms in transit), ' + snap.perSecond + ' in the last second'
    : 'no snapshot yet';
  var ch = chars[sel];
  var hud = (playing ? '\u25B6 ' : '\u275A\u275A ') + 'frame ' + frame + '   t ' + t.toFixed(3) + ' s   ' + speed + '\u00d7\n' +
    'character #' + ch.id + (ch.name ? ' ' + ch.name : '') + (side ? '   side by side' : '') + '\n' + net;
  if (webglError) hud = '';
  setText($('hud'), hud);
  setText($('netline'), net);
  streams.forEach(function (st) {
    if (!st.row) return;
    var d = st.data[sel], on = !!d.present[frame];
    var text = st.isTruth ? (on ? 'ref' : 'absent') : on ? fmtCm(d.err[frame]) : 'absent';
    setText(st.row.now, text);
  });
}

function buildPanel() {
  // Characters
  var cs = $('character');
  chars.forEach(function (ch) {
    var o = document.createElement('option');
    o.value = String(ch.index);
    o.textContent = '#' + ch.id + (ch.name ? ' ' + ch.name : '') + ' (' + ch.J + ' joints' + (ch.skeletonName ? ', ' + ch.skeletonName : '') + ')';
    cs.appendChild(o);
  });
  cs.value = String(sel);
  cs.addEventListener('change', function () { selectCharacter(Number(cs.value)); cs.blur(); });

  var fo = $('follow'), si = $('side'), ax = $('axes');
  fo.checked = follow; si.checked = side; ax.checked = showAxes;
  fo.addEventListener('change', function () { setFollow(fo.checked); });
  si.addEventListener('change', function () { setSide(si.checked); });
  ax.addEventListener('change', function () { setAxes(ax.checked); });

  // Streams table
  var tb = document.querySelector('#streams tbody');
  streams.forEach(function (st) {
    var tr = document.createElement('tr');
    var m = st.meta.metrics || {};
    var cb = document.createElement('input');
    cb.type = 'checkbox';
    cb.checked = st.shown;
    cb.title = st.isTruth ? 'Show the truth (solid)' : 'Show ' + st.name + ' as a ghost';
    cb.addEventListener('change', function () { setShown(st, cb.checked); });
    var td0 = document.createElement('td');
    td0.appendChild(cb);
    tr.appendChild(td0);
    var tdn = document.createElement('td');
    tdn.className = 'name';
    var sw = document.createElement('span');
    sw.className = 'swatch';
    sw.style.background = st.css;
    tdn.appendChild(sw);
    tdn.appendChild(document.createTextNode(st.name + (st.name === meta.default_strategy ? ' *' : '')));
    if (st.name === meta.default_strategy) tdn.title = 'the default strategy';
    if (st.meta.label) tdn.title = (tdn.title ? tdn.title + ': ' : '') + st.meta.label;
    tr.appendChild(tdn);
    var now = document.createElement('td');
    now.className = 'now';
    tr.appendChild(now);
    [fmtCm(m.present_err_cm_mean), fmtCm(m.present_err_cm_p99), fmt(m.accel_rms_ratio, 2),
      typeof m.pops === 'number' ? String(m.pops) : '\u2014'].forEach(function (text) {
      var td = document.createElement('td');
      td.textContent = st.isTruth ? '' : text;
      tr.appendChild(td);
    });
    tb.appendChild(tr);
    st.row = { tr: tr, cb: cb, now: now };
  });

  // Network
  var p = meta.profile || {};
  var dl = $('network');
  var sn = snaps.lat.length;
  var lats = Array.prototype.slice.call(snaps.lat).sort(function (a, b) { return a - b; });
  var gap = 0;
  for (var i = 1; i < sn; i++) gap = Math.max(gap, snaps.arrival[i] - snaps.arrival[i - 1]);
  var meanLat = lats.reduce(function (a, b) { return a + b; }, 0) / Math.max(1, sn);
  var rows = [
    ['profile', (p.name || '\u2014')],
    ['latency', fmt(p.latency_ms, 0) + ' ms one way, jitter ' + fmt(p.jitter_ms, 0) + ' ms'],
    ['loss', pct(p.loss) + (p.burst ? ', bursts of ' + fmt(p.burst, 1) : ', independent')],
    ['duplicates', pct(p.duplicate)],
    ['snapshots', fmt(meta.snapshot_hz, 0) + ' Hz' + (typeof meta.bandwidth_kbps === 'number' ? ', ' + fmt(meta.bandwidth_kbps, 0) + ' kbit/s budget' : '')],
    ['decoded', sn ? sn + ' snapshots; transit mean ' + fmt(meanLat * 1000, 0) + ' ms, p95 ' +
      fmt(lats[Math.min(sn - 1, Math.floor(sn * 0.95))] * 1000, 0) + ' ms; longest gap ' + fmt(gap * 1000, 0) + ' ms' : 'none listed'],
    ['rendering', fmt(HZ, 0) + ' Hz, ' + F + ' frames (' + fmt(F / HZ, 2) + ' s from t = ' + fmt(T0, 3) + ' s)'],
    ['epochs', plural(epochs.filter(function (e) { return e.kind === 'teleport'; }).length, 'teleport') + ', ' +
      plural(epochs.filter(function (e) { return e.kind !== 'teleport'; }).length, 'reset') + ' (all characters)'],
    ['blackouts', plural(blackouts.length, 'span') + ' without a snapshot getting through' +
      (blackouts.length ? ', ' + fmt(blackouts.reduce(function (a, b) { return a + (b[1] - b[0]); }, 0) * 1000, 0) + ' ms in all' : '')],
    ['seed', meta.seed !== undefined ? String(meta.seed) : '\u2014'],
    ['recording', meta.recording || '\u2014']
  ];
  rows.forEach(function (r) {
    var dt = document.createElement('dt');
    dt.textContent = r[0];
    var dd = document.createElement('dd');
    dd.textContent = r[1];
    dl.appendChild(dt);
    dl.appendChild(dd);
  });

  // Strategy settings
  var box = $('settings');
  streams.forEach(function (st) {
    if (st.isTruth) return;
    var det = document.createElement('details');
    if (st.name === meta.default_strategy) det.open = true;
    var sum = document.createElement('summary');
    var sw = document.createElement('span');
    sw.className = 'swatch';
    sw.style.background = st.css;
    sum.appendChild(sw);
    sum.appendChild(document.createTextNode(st.name + (typeof st.meta.display_delay_ms === 'number'
      ? ' \u2014 shown ' + fmt(st.meta.display_delay_ms, 0) + ' ms late' : '')));
    det.appendChild(sum);
    var d = document.createElement('dl');
    var add = function (k, v) {
      var dt = document.createElement('dt');
      dt.textContent = k;
      var dd = document.createElement('dd');
      dd.textContent = v;
      d.appendChild(dt);
      d.appendChild(dd);
    };
    if (st.meta.label) add('label', st.meta.label);
    var s = st.meta.settings || {};
    Object.keys(s).forEach(function (k) { add(k, typeof s[k] === 'number' ? String(+s[k].toPrecision(6)) : JSON.stringify(s[k])); });
    det.appendChild(d);
    box.appendChild(det);
  });

  // Transport
  $('btn-start').addEventListener('click', function () { pause(); applyFrame(0); });
  $('btn-back').addEventListener('click', function (e) { step(e.shiftKey ? -10 : -1); });
  $('btn-play').addEventListener('click', togglePlay);
  $('btn-fwd').addEventListener('click', function (e) { step(e.shiftKey ? 10 : 1); });
  $('btn-end').addEventListener('click', function () { pause(); applyFrame(F - 1); });
  $('btn-prev-ev').addEventListener('click', function () { jumpMarker(-1); });
  $('btn-next-ev').addEventListener('click', function () { jumpMarker(1); });
  var sp = $('speed');
  sp.addEventListener('change', function () { setSpeed(Number(sp.value)); sp.blur(); });
  var lo = $('loop');
  lo.addEventListener('change', function () { loop = lo.checked; });
  // Buttons keep no focus, so space stays play / pause.
  Array.prototype.forEach.call(document.querySelectorAll('#transport button'), function (b) {
    b.addEventListener('mousedown', function (e) { e.preventDefault(); });
  });
}

function refreshRows() {
  streams.forEach(function (st) {
    if (!st.row) return;
    st.row.cb.checked = st.shown;
    st.row.tr.classList.toggle('hidden-stream', !st.shown);
  });
}

// ---------------------------------------------------------------------------------------------
// View toggles

function assignSlots() {
  var k = 0;
  streams.forEach(function (st) { if (!st.isTruth && st.shown) st.slot = ++k; });
}

function viewChanged() {
  assignSlots();
  rebuildMarkers();
  refreshRows();
  buildLegend();
  drawTimelineStatic();
  drawTimeline();
  sceneDirty = true;
  followTarget();
  updateReadouts();
  requestRender();
}

function setShown(st, on) { st.shown = !!on; viewChanged(); }
function selectCharacter(c) {
  if (!(c >= 0 && c < chars.length)) return;
  sel = c;
  $('character').value = String(c);
  viewChanged();
}
function setFollow(on) { follow = !!on; $('follow').checked = follow; followTarget(); requestRender(); }
function setSide(on) { side = !!on; $('side').checked = side; viewChanged(); }
function setAxes(on) { showAxes = !!on; $('axes').checked = showAxes; sceneDirty = true; requestRender(); }

function onKey(e) {
  var t = e.target, tag = t && t.tagName;
  if (tag === 'TEXTAREA' || (tag === 'INPUT' && t.type !== 'checkbox' && t.type !== 'range')) return;
  if (e.ctrlKey || e.metaKey || e.altKey || !api.ready) return;
  switch (e.key) {
    case ' ': case 'k': togglePlay(); break;
    case 'ArrowLeft': step(e.shiftKey ? -10 : -1); break;
    case 'ArrowRight': step(e.shiftKey ? 10 : 1); break;
    case 'Home': pause(); applyFrame(0); break;
    case 'End': pause(); applyFrame(F - 1); break;
    case '[': nudgeSpeed(-1); break;
    case ']': nudgeSpeed(1); break;
    case ',': case '<': jumpMarker(-1); break;
    case '.': case '>': jumpMarker(1); break;
    case 'f': case 'F': setFollow(!follow); break;
    case 's': case 'S': setSide(!side); break;
    case 'a': case 'A': setAxes(!showAxes); break;
    default: return;
  }
  e.preventDefault();
  e.stopPropagation();
}

