/* kinesync replay viewer: loading: the bytes (fetched, or from replay.ksview.js on disk), the container, inflating, the planes, the model; data access.
 * (After viewer-state.js; the order: viewer-state.js.) */
'use strict';

// ---------------------------------------------------------------------------------------------
// Loading: bytes, container, inflate, planes

function loadBytes() {
  var proto = location.protocol;
  if (proto === 'http:' || proto === 'https:') {
    return fetch('replay.ksview', { cache: 'no-cache' }).then(function (r) {
      if (!r.ok) throw new Error('fetching replay.ksview: HTTP ' + r.status);
      return r.arrayBuffer();
    }).then(function (b) { return new Uint8Array(b); }, function (e) { return fromBase64(e); });
  }
  return Promise.resolve().then(function () { return fromBase64(null); });
}

function fromBase64(fetchError) {
  var b64 = window.KS_VIEW_BASE64;
  if (typeof b64 !== 'string' || !b64.length) {
    throw new Error('The replay data is missing: replay.ksview.js (next to index.html) did not define ' +
      'KS_VIEW_BASE64' + (fetchError ? ', and fetching replay.ksview failed (' + errorText(fetchError) + ')' : '') +
      '. Write the viewer again with kinesync-replay RECORDING --view DIR.');
  }
  var bin;
  try { bin = atob(b64); } catch (e) { throw new Error('replay.ksview.js: KS_VIEW_BASE64 is not valid base64'); }
  var out = new Uint8Array(bin.length);
  for (var i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function parseContainer(bytes) {
  var magic = 'KSVIEW01';
  if (bytes.length < 20) throw new Error('replay.ksview is too short (' + bytes.length + ' bytes) to be a kinesync view');
  for (var i = 0; i < 8; i++) {
    if (bytes[i] !== magic.charCodeAt(i)) {
      var got = String.fromCharCode.apply(null, Array.prototype.slice.call(bytes, 0, 8)).replace(/[^\x20-\x7e]/g, '?');
      throw new Error('replay.ksview is not a kinesync view: it starts with "' + got + '", not "KSVIEW01"');
    }
  }
  var dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  var metaLen = dv.getUint32(8, true);
  if (12 + metaLen + 8 > bytes.length) throw new Error('replay.ksview is truncated: the meta (' + metaLen + ' bytes) runs past the end of the file');
  var text;
  try { text = new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(12, 12 + metaLen)); } catch (e) {
    throw new Error('replay.ksview: the meta is not UTF-8');
  }
  var m;
  try { m = JSON.parse(text); } catch (e) { throw new Error('replay.ksview: the meta is not valid JSON (' + errorText(e) + ')'); }
  var off = 12 + metaLen;
  var rawLen = dv.getUint32(off, true), packedLen = dv.getUint32(off + 4, true);
  if (off + 8 + packedLen > bytes.length) {
    throw new Error('replay.ksview is truncated: ' + packedLen + ' compressed bytes announced, ' + (bytes.length - off - 8) + ' present');
  }
  return { meta: m, rawLen: rawLen, packed: bytes.subarray(off + 8, off + 8 + packedLen) };
}

// The browser's own zlib inflater (DecompressionStream: Chromium 80, Firefox 113, Safari 16.4).
function inflate(packed, rawLen) {
  if (typeof DecompressionStream !== 'function' || typeof Response !== 'function' || typeof Blob !== 'function') {
    return Promise.reject(new Error('this browser cannot inflate replay.ksview (it has no DecompressionStream): open the viewer in a current Chromium, Firefox or Safari'));
  }
  var stream = new Blob([packed]).stream().pipeThrough(new DecompressionStream('deflate'));
  return new Response(stream).arrayBuffer().then(function (b) {
    var raw = new Uint8Array(b);
    if (raw.length !== rawLen) throw new Error('replay.ksview: the frames inflate to ' + raw.length + ' bytes, raw_len says ' + rawLen);
    return raw;
  }, function (e) {
    throw new Error('replay.ksview: the compressed frames are damaged or truncated (' + (e && e.message ? e.message : e) + ')');
  });
}

function requireArray(v, what) {
  if (!Array.isArray(v)) throw new Error('replay.ksview: the meta has no ' + what + ' list');
  return v;
}

function validateMeta(m) {
  if (!m || typeof m !== 'object') throw new Error('replay.ksview: the meta is not an object');
  if (m.format !== undefined && m.format !== 'kinesync-view') throw new Error('replay.ksview: format "' + m.format + '", expected "kinesync-view"');
  if (m.version !== undefined && m.version !== 1) {
    throw new Error('replay.ksview is version ' + m.version + '; this viewer reads version 1 (write the viewer again with the same kinesync-replay)');
  }
  if (!(Number.isInteger(m.frames) && m.frames > 0)) throw new Error('replay.ksview holds no frames (frames = ' + m.frames + ')');
  if (!(typeof m.render_hz === 'number' && m.render_hz > 0)) throw new Error('replay.ksview: the meta has no render_hz');
  requireArray(m.streams, 'streams');
  if (!m.streams.length || m.streams[0].name !== 'truth') throw new Error('replay.ksview: the first stream is not the truth');
  requireArray(m.characters, 'characters');
  if (!m.characters.length) throw new Error('replay.ksview holds no characters');
  requireArray(m.skeletons, 'skeletons');
  m.characters.forEach(function (c, i) {
    var sk = m.skeletons[c.skeleton];
    if (!sk || !Array.isArray(sk.parents) || !sk.parents.length) {
      throw new Error('replay.ksview: character ' + i + ' has skeleton ' + c.skeleton + ', which is not in the meta');
    }
    sk.parents.forEach(function (p, j) {
      if (!Number.isInteger(p) || p < -1 || p >= sk.parents.length || p === j) {
        throw new Error('replay.ksview: skeleton ' + c.skeleton + ' joint ' + j + ' has parent ' + p);
      }
    });
  });
}

function decodePlanes(raw) {
  var J, c, s, f, k;
  var need = 0;
  for (s = 0; s < meta.streams.length; s++) {
    for (c = 0; c < chars.length; c++) need += F * (1 + 4 + 12 + chars[c].J * (6 + 4));
  }
  if (raw.length !== need) {
    throw new Error('replay.ksview: the frames are ' + raw.length + ' bytes, but ' + meta.streams.length + ' streams x ' +
      chars.length + ' characters x ' + F + ' frames need ' + need);
  }
  var dv = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  var off = 0;
  for (s = 0; s < streams.length; s++) {
    for (c = 0; c < chars.length; c++) {
      J = chars[c].J;
      var d = {};
      d.present = raw.slice(off, off + F);
      off += F;
      d.err = new Float32Array(F);
      for (f = 0; f < F; f++) d.err[f] = dv.getFloat32(off + 4 * f, true);
      off += 4 * F;
      var root = d.root = new Int32Array(F * 3);
      var q0 = 0, q1 = 0, q2 = 0;
      for (f = 0; f < F; f++, off += 12) {
        q0 = (q0 + dv.getInt32(off, true)) | 0;
        q1 = (q1 + dv.getInt32(off + 4, true)) | 0;
        q2 = (q2 + dv.getInt32(off + 8, true)) | 0;
        root[f * 3] = q0; root[f * 3 + 1] = q1; root[f * 3 + 2] = q2;
      }
      var n = J * 3;
      var pos = d.pos = new Int16Array(F * n);  // Int16Array stores wrap, as the deltas do
      for (k = 0; k < n; k++) pos[k] = dv.getInt16(off + 2 * k, true);
      for (k = n; k < F * n; k++) pos[k] = pos[k - n] + dv.getInt16(off + 2 * k, true);
      off += 2 * F * n;
      n = J * 4;
      var rot = d.rot = new Int8Array(F * n);
      for (k = 0; k < n; k++) rot[k] = dv.getInt8(off + k);
      for (k = n; k < F * n; k++) rot[k] = rot[k - n] + dv.getInt8(off + k);
      off += F * n;
      streams[s].data.push(d);
    }
  }
}

function buildModel(m) {
  meta = m;
  F = m.frames;
  HZ = m.render_hz;
  T0 = typeof m.t0 === 'number' ? m.t0 : 0;
  api.frames = F;
  var extra = 0;
  streams = m.streams.map(function (sm, i) {
    var name = String(sm.name);
    var css = STREAM_COLORS[name] || EXTRA_COLORS[extra++ % EXTRA_COLORS.length];
    return { name: name, index: i, isTruth: i === 0, css: css, meta: sm, shown: i === 0, slot: 0, data: [], gfx: null, row: null };
  });
  api.streams = streams.map(function (s) { return s.name; });
  totalJoints = 0;
  chars = m.characters.map(function (cm, i) {
    var sk = m.skeletons[cm.skeleton];
    var ch = {
      index: i, id: cm.id !== undefined ? cm.id : i, name: cm.name || '', J: sk.parents.length, parents: sk.parents.slice(),
      jointNames: Array.isArray(sk.joint_names) ? sk.joint_names : [], skeletonName: sk.name || '', base: totalJoints
    };
    totalJoints += ch.J;
    if (ch.J > maxJ) maxJ = ch.J;
    return ch;
  });
  epochs = (Array.isArray(m.epochs) ? m.epochs : []).filter(function (e) { return e && typeof e.t === 'number'; });
  blackouts = (Array.isArray(m.blackouts) ? m.blackouts : []).filter(function (b) { return Array.isArray(b) && b.length >= 2; });
  var sn = (Array.isArray(m.snapshots) ? m.snapshots : []).filter(function (x) { return Array.isArray(x) && x.length >= 2; });
  sn.sort(function (a, b) { return a[1] - b[1]; });
  snaps = { arrival: new Float64Array(sn.length), tickMax: new Float64Array(sn.length), lat: new Float64Array(sn.length) };
  var tm = -Infinity;
  sn.forEach(function (x, i) {
    snaps.arrival[i] = x[1];
    tm = Math.max(tm, x[0]);
    snaps.tickMax[i] = tm;
    snaps.lat[i] = x[1] - x[0];
  });
}

// ---------------------------------------------------------------------------------------------
// Data access

function clampFrame(f) { f = Math.round(Number(f)); if (!isFinite(f)) f = 0; return Math.max(0, Math.min(F - 1, f)); }
function frameTime(f) { return T0 + f / HZ; }
function timeFrame(t) { return clampFrame((t - T0) * HZ); }

function streamIndex(name) {
  for (var i = 0; i < streams.length; i++) if (streams[i].name === name) return i;
  return -1;
}

function present(s, c, f) {
  var d = streams[s] && streams[s].data[c];
  return !!(d && d.present[f]);
}

function rootOf(s, c, f) {
  if (s < 0 || !present(s, c, f)) return null;
  var r = streams[s].data[c].root;
  return [r[f * 3] / 1000, r[f * 3 + 1] / 1000, r[f * 3 + 2] / 1000];
}

