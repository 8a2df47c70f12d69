/* kinesync replay viewer: the timeline (canvas), the controls and the start.
 * (After viewer-state.js; the order: viewer-state.js.) */
'use strict';

// ---------------------------------------------------------------------------------------------
// Timeline (canvas): time axis, blackouts, error curves of the shown strategies for the selected
// character, their pops, epoch changes, snapshot arrivals, and the cursor.

var tl = { canvas: null, ctx: null, stat: null, w: 0, h: 0, dpr: 1, errMax: 1, dragging: false };
var TL = { axis: 14, graphTop: 17, graphBottom: 66, popsTop: 69, popRow: 7, snapH: 7 };

function tlX(f) { return TIMELINE_PAD + (F > 1 ? f / (F - 1) : 0) * (tl.w - 2 * TIMELINE_PAD); }
function tlXt(t) { return tlX((t - T0) * HZ); }
function tlFrameAt(x) { return clampFrame((x - TIMELINE_PAD) / Math.max(1, tl.w - 2 * TIMELINE_PAD) * (F - 1)); }

function layoutTimeline() {
  var c = tl.canvas;
  if (!c) return;
  var w = Math.max(50, c.clientWidth), h = Math.max(40, c.clientHeight), dpr = window.devicePixelRatio || 1;
  if (w === tl.w && h === tl.h && dpr === tl.dpr) return;
  tl.w = w; tl.h = h; tl.dpr = dpr;
  c.width = tl.stat.width = Math.round(w * dpr);
  c.height = tl.stat.height = Math.round(h * dpr);
  drawTimelineStatic();
  drawTimeline();
}

function niceStep(pxPerSec) {
  var steps = [0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1200, 3600];
  for (var i = 0; i < steps.length; i++) if (steps[i] * pxPerSec >= 64) return steps[i];
  return steps[steps.length - 1];
}

function shownStrategies() { return streams.filter(function (st) { return !st.isTruth && st.shown; }); }

function drawTimelineStatic() {
  if (!tl.stat || !api.ready) return;
  var g = tl.stat.getContext('2d'), w = tl.w, h = tl.h;
  g.setTransform(tl.dpr, 0, 0, tl.dpr, 0, 0);
  g.clearRect(0, 0, w, h);
  g.fillStyle = '#15171b';
  g.fillRect(0, 0, w, h);
  var x0 = tlX(0), x1 = tlX(F - 1);
  g.fillStyle = '#1c1f24';
  g.fillRect(x0, TL.graphTop, x1 - x0, TL.graphBottom - TL.graphTop);

  // Time axis: server time, seconds.
  var span = (F - 1) / HZ, pxs = span > 0 ? (x1 - x0) / span : 1, stepS = niceStep(pxs);
  g.font = '10px "DejaVu Sans", sans-serif';
  g.textBaseline = 'top';
  g.strokeStyle = '#2b2f36';
  g.fillStyle = '#7f8791';
  g.lineWidth = 1;
  var tEnd = T0 + span;
  for (var ts = Math.ceil(T0 / stepS - 1e-9) * stepS; ts <= tEnd + 1e-9; ts += stepS) {
    var x = Math.round(tlXt(ts)) + 0.5;
    g.beginPath(); g.moveTo(x, TL.axis - 3); g.lineTo(x, h); g.stroke();
    var label = (stepS < 1 ? ts.toFixed(1) : String(Math.round(ts))) + ' s';
    g.fillText(label, Math.min(x + 2, w - 30), 1);
  }

  // Blackouts.
  g.fillStyle = 'rgba(255, 70, 70, 0.22)';
  blackouts.forEach(function (b) {
    var a = tlXt(b[0]), e = Math.max(tlXt(b[1]), a + 1.5);
    g.fillRect(a, TL.axis, e - a, h - TL.axis);
  });

  // Error curves (per pixel column, the largest error among its frames), on a log scale: errors
  // of a few cm and the metres of a teleport both show.
  var shown = shownStrategies();
  var maxAll = 0;
  shown.forEach(function (st) {
    var d = st.data[sel];
    for (var f = 0; f < F; f++) if (d.present[f] && d.err[f] > maxAll) maxAll = d.err[f];
  });
  var errMax = tl.errMax = Math.max(10, niceCeil(maxAll));
  var gh = TL.graphBottom - TL.graphTop, logMax = Math.log(1 + errMax);
  var yErr = function (e) { return TL.graphBottom - Math.log(1 + Math.max(0, e)) / logMax * gh; };
  g.strokeStyle = '#2c3038';
  g.fillStyle = '#69707a';
  g.textBaseline = 'middle';
  for (var gl = 1; gl < errMax; gl *= 10) {
    var gy = Math.round(yErr(gl)) + 0.5;
    g.beginPath(); g.moveTo(x0, gy); g.lineTo(x1, gy); g.stroke();
    g.fillText(String(gl), x1 - 26, gy);
  }
  g.textBaseline = 'top';
  var cols = Math.max(1, Math.round(x1 - x0));
  shown.forEach(function (st) {
    var d = st.data[sel];
    g.strokeStyle = st.css;
    g.lineWidth = 1.25;
    g.beginPath();
    var pen = false;
    for (var cx = 0; cx < cols; cx++) {
      var fa = Math.floor(cx / cols * F), fb = Math.max(fa + 1, Math.floor((cx + 1) / cols * F));
      var m = -1;
      for (var f = fa; f < fb && f < F; f++) if (d.present[f] && d.err[f] > m) m = d.err[f];
      if (m < 0) { pen = false; continue; }
      var y = yErr(m);
      if (pen) g.lineTo(x0 + cx + 0.5, y); else { g.moveTo(x0 + cx + 0.5, y); pen = true; }
    }
    g.stroke();
  });
  g.fillStyle = '#8b929c';
  g.fillText(shown.length ? 'error, character #' + chars[sel].id + ' (cm, log scale to ' + errMax + ')' : 'no strategy shown',
    x0 + 3, TL.graphTop + 2);

  // Pops: one row per shown strategy.
  var row = Math.max(3, Math.min(TL.popRow, Math.floor((h - TL.snapH - 1 - TL.popsTop) / Math.max(1, shown.length))));
  shown.forEach(function (st, i) {
    var y = TL.popsTop + i * row;
    if (y + row > h - TL.snapH - 1) return;
    g.fillStyle = st.css;
    popsOf(st).forEach(function (t) { g.fillRect(Math.round(tlXt(t)) - 0.75, y, 1.5, row - 1); });
  });

  // Snapshot arrivals.
  g.fillStyle = 'rgba(200, 210, 225, 0.55)';
  var ys = h - TL.snapH;
  for (var i = 0; i < snaps.arrival.length; i++) g.fillRect(Math.round(tlXt(snaps.arrival[i])), ys, 1, TL.snapH - 1);

  // Epoch changes: the selected character's bright, the others faint.
  epochs.forEach(function (e) {
    var mine = e.character === sel, x = Math.round(tlXt(e.t)) + 0.5;
    var col = e.kind === 'reset' ? '255, 92, 240' : '255, 180, 60';
    g.strokeStyle = 'rgba(' + col + ', ' + (mine ? 0.95 : 0.3) + ')';
    g.lineWidth = mine ? 1.5 : 1;
    g.setLineDash(mine ? [] : [3, 3]);
    g.beginPath(); g.moveTo(x, TL.axis); g.lineTo(x, h); g.stroke();
    if (mine) {
      g.fillStyle = 'rgb(' + col + ')';
      g.beginPath(); g.moveTo(x - 4, TL.axis); g.lineTo(x + 4, TL.axis); g.lineTo(x, TL.axis + 6); g.fill();
    }
  });
  g.setLineDash([]);
}

function niceCeil(v) {
  if (!(v > 0)) return 0;
  var p = Math.pow(10, Math.floor(Math.log10(v))), m = v / p;
  return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

function drawTimeline() {
  if (!tl.ctx || !api.ready) return;
  var g = tl.ctx;
  g.setTransform(1, 0, 0, 1, 0, 0);
  g.drawImage(tl.stat, 0, 0);
  g.setTransform(tl.dpr, 0, 0, tl.dpr, 0, 0);
  var x = Math.round(tlX(frame)) + 0.5;
  g.strokeStyle = '#ffffff';
  g.lineWidth = 1.5;
  g.beginPath(); g.moveTo(x, TL.axis); g.lineTo(x, tl.h); g.stroke();
  g.fillStyle = '#ffffff';
  g.beginPath(); g.moveTo(x - 5, TL.axis - 1); g.lineTo(x + 5, TL.axis - 1); g.lineTo(x, TL.axis + 6); g.fill();
}

function buildLegend() {
  var lg = $('legend');
  lg.textContent = '';
  var add = function (css, text, title) {
    var s = document.createElement('span');
    s.className = 'key';
    var i = document.createElement('i');
    i.style.background = css;
    s.appendChild(i);
    s.appendChild(document.createTextNode(text));
    if (title) s.title = title;
    lg.appendChild(s);
  };
  shownStrategies().forEach(function (st) { add(st.css, st.name + ' error, pops', 'error curve and pop ticks of ' + st.name); });
  add('rgb(255, 180, 60)', 'teleport', 'epoch change: teleport (bright: the selected character)');
  add('rgb(255, 92, 240)', 'reset', 'epoch change: reset');
  add('rgba(255, 70, 70, 0.5)', 'blackout', 'no snapshot got through');
  add('rgba(200, 210, 225, 0.7)', 'snapshot arrivals');
}

function timelineTip(x) {
  var f = tlFrameAt(x), t = frameTime(f), near = 4 / Math.max(1, (tl.w - 2 * TIMELINE_PAD)) * (F - 1) / HZ;
  var lines = ['frame ' + f + '   t ' + t.toFixed(3) + ' s'];
  epochs.forEach(function (e) {
    if (Math.abs(e.t - t) <= near) lines.push(e.kind + ', character #' + (chars[e.character] ? chars[e.character].id : e.character) + ' at ' + e.t.toFixed(3) + ' s');
  });
  blackouts.forEach(function (b) {
    if (t >= b[0] - near && t < b[1] + near) lines.push('blackout ' + b[0].toFixed(3) + '\u2013' + b[1].toFixed(3) + ' s');
  });
  shownStrategies().forEach(function (st) {
    var n = 0;
    popsOf(st).forEach(function (p) { if (Math.abs(p - t) <= near) n++; });
    if (n) lines.push(st.name + ': ' + (n > 1 ? n + ' pops' : 'pop'));
    var d = st.data[sel];
    if (d.present[f]) lines.push(st.name + ' ' + d.err[f].toFixed(1) + ' cm');
  });
  return lines.join('\n');
}

function buildTimeline() {
  var c = tl.canvas = $('timeline');
  tl.ctx = c.getContext('2d');
  tl.stat = document.createElement('canvas');
  var tip = $('tl-tip');
  var xOf = function (e) { return e.clientX - c.getBoundingClientRect().left; };
  c.addEventListener('pointerdown', function (e) {
    if (e.button !== 0) return;
    tl.dragging = true;
    try { c.setPointerCapture(e.pointerId); } catch (err) { /* synthetic events */ }
    pause();
    applyFrame(tlFrameAt(xOf(e)));
  });
  c.addEventListener('pointermove', function (e) {
    var x = xOf(e);
    if (tl.dragging) applyFrame(tlFrameAt(x));
    tip.hidden = false;
    tip.textContent = timelineTip(x);
    tip.style.left = Math.max(60, Math.min(tl.w - 60, x)) + 'px';
  });
  var up = function () { tl.dragging = false; };
  c.addEventListener('pointerup', up);
  c.addEventListener('pointercancel', up);
  c.addEventListener('pointerleave', function () { tip.hidden = true; });
}

// ---------------------------------------------------------------------------------------------
// Start

function applyParams() {
  var q = new URLSearchParams(location.search);
  var startFrame = null;
  if (q.has('frame')) {
    var f = Number(q.get('frame'));
    if (isFinite(f)) startFrame = clampFrame(f); else notice('frame=' + q.get('frame') + ' is not a number');
  }
  if (q.has('character')) {
    var c = Number(q.get('character'));
    if (Number.isInteger(c) && c >= 0 && c < chars.length) sel = c;
    else notice('character=' + q.get('character') + ': there are characters 0 to ' + (chars.length - 1));
  }
  if (q.has('strategies')) {
    // (An unescaped "+" in a query reads as a space: deadblend+sod.)
    var want = q.get('strategies').split(',').map(function (s) { return s.trim().replace(/ /g, '+'); }).filter(Boolean);
    want.forEach(function (n) {
      if (streamIndex(n) < 0) notice('strategies: "' + n + '" is not in this replay (' + api.streams.slice(1).join(', ') + ')');
    });
    streams.forEach(function (st) { if (!st.isTruth) st.shown = want.indexOf(st.name) >= 0; });
  } else {
    streams.forEach(function (st) { if (!st.isTruth) st.shown = st.name === meta.default_strategy || st.name === 'interp'; });
  }
  var on = function (k) { var v = q.get(k); return v === '1' || v === 'true' || v === 'on' || v === ''; };
  if (q.has('side')) side = on('side');
  if (q.has('follow')) follow = on('follow');
  if (q.has('axes')) showAxes = on('axes');
  if (q.has('speed')) {
    var sp = Number(q.get('speed'));
    if (SPEEDS.indexOf(sp) >= 0) speed = sp; else notice('speed=' + q.get('speed') + ': use one of ' + SPEEDS.join(', '));
  }
  if (q.has('loop')) loop = on('loop');
  var autoplay = startFrame === null && (!q.has('play') || on('play'));
  // mark=next|prev: once started, jump to the next (previous) marker, as the "mark" buttons do.
  var mark = q.get('mark') === 'next' ? 1 : q.get('mark') === 'prev' ? -1 : 0;
  if (q.has('mark') && !mark) notice('mark=' + q.get('mark') + ': use next or prev');
  return { frame: startFrame === null ? 0 : startFrame, autoplay: autoplay && !mark, mark: mark };
}

function init(m) {
  validateMeta(m);
  buildModel(m);
}

function start() {
  // (OrbitControls.js makes an empty THREE when three.min.js is missing.)
  if (typeof THREE === 'undefined' || typeof THREE.WebGLRenderer !== 'function') {
    fail('three.min.js did not load (it must sit next to index.html); the viewer needs it.');
    return;
  }
  loadBytes().then(function (bytes) {
    var box = parseContainer(bytes);
    init(box.meta);
    return inflate(box.packed, box.rawLen).then(function (raw) {
      if (raw.length !== box.rawLen) throw new Error('replay.ksview: the frames inflate to ' + raw.length + ' bytes, raw_len says ' + box.rawLen);
      decodePlanes(raw);
    });
  }).then(function () {
    var opts = applyParams();
    frame = opts.frame;
    api.frame = frame;
    buildScene();
    buildPanel();
    buildTimeline();
    if (renderer) buildLabels();
    assignSlots();
    rebuildMarkers();
    refreshRows();
    buildLegend();
    $('speed').value = String(speed);
    $('loop').checked = loop;
    initCamera();
    document.addEventListener('keydown', onKey, true);
    api.ready = true;
    if (webglError) showMessage(webglError, true); else hideMessage();
    if (webglError) api.error = webglError;
    if (typeof ResizeObserver === 'function') {
      var ro = new ResizeObserver(function () { resize(); });
      ro.observe($('view'));
      ro.observe($('timeline'));
    }
    window.addEventListener('resize', resize);
    resize();
    applyFrame(frame, true);
    if (opts.mark) jumpMarker(opts.mark);
    updatePlayButton();
    if (opts.autoplay) play();
  }).catch(fail);
}

start();
