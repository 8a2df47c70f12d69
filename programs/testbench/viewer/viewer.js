/* kinesync replay viewer (written by kinesync-replay --view).
 *
 * A classic script (no modules: those do not load from file://). Needs, loaded before it:
 * three.min.js (r111, global THREE), OrbitControls.js (THREE.OrbitControls) and, for a page opened
 * from disk, replay.ksview.js (window.KS_VIEW_BASE64). Over http(s) it fetches replay.ksview.
 *
 * replay.ksview: "KSVIEW01", u32 meta_len, meta JSON, u32 raw_len, u32 packed_len, zlib stream of
 * the planes: per stream, per character: present u8[F], error_cm f32[F], root i32[F*3] (mm),
 * pos i16[F*J*3] (mm from the root), rot i8[F*J*4] (quaternion w,x,y,z * 127), all but the first
 * two delta-coded over frames (wrapping in their type).
 *
 * window.ksView is the page's state for scripts and tests; <pre id="ks-state"> holds it as JSON.
 */
(function () {
  'use strict';

  // ---------------------------------------------------------------------------------------------
  // Constants

  var STREAM_COLORS = {
    truth: '#d4d8de',
    snap: '#ff5d5d',
    interp: '#4c8dff',
    hermite: '#41d17a',
    extrap: '#ffa53a',
    deadblend: '#c679ff',
    'deadblend+sod': '#2fe3d3',
    'hermite+ahead': '#ff7ccc',
    'deadblend+sod+ahead': '#ffe14d'
  };
  var EXTRA_COLORS = ['#a4e85a', '#8fd6ff', '#ffb199'];
  var SPEEDS = [0.05, 0.1, 0.25, 0.5, 1, 2];
  var SIDE_SPACING = 1.0;          // m between side-by-side ghosts
  var BONE_R = 0.018, JOINT_R = 0.03;  // truth's capsule radius and joint sphere radius, m
  var GHOST_GROW = 1.4;            // ghosts are thicker, so a ghost on the truth shows as a sheath
  var GHOST_OPACITY = 0.42;
  var AXIS_LEN = 0.09;
  var MAX_CHAR_LABELS = 32;
  var TIMELINE_PAD = 8;

  var $ = function (id) { return document.getElementById(id); };

  // ---------------------------------------------------------------------------------------------
  // Public state

  var api = window.ksView = {
    ready: false,
    error: null,
    frames: 0,
    frame: 0,
    streams: [],
    setFrame: function (f) { setFrame(f); },
    play: function () { play(); },
    pause: function () { pause(); },
    root: function (name, c) { return rootOf(streamIndex(name), c, frame); },
    time: function () { return frameTime(frame); },
    // The 3D view's state, for debugging: camera, orbit target, selection ring.
    view: function () {
      if (!renderer) return null;
      return {
        camera: camera.position.toArray(), target: controls.target.toArray(),
        ring: selRing.visible ? selRing.position.toArray() : null, side: side, follow: follow, selected: sel
      };
    }
  };

  // ---------------------------------------------------------------------------------------------
  // Replay data

  var meta = null;
  var F = 0, HZ = 60, T0 = 0;
  var streams = [];  // {name, index, isTruth, css, color, meta, shown, slot, data: [per character], gfx}
  var chars = [];    // {index, id, name, J, parents, jointNames, base}
  var totalJoints = 0, maxJ = 1;
  var snaps = null;  // {arrival: Float64Array (sorted), tickMax: Float64Array (running max of ticks), lat: Float64Array}
  var epochs = [], blackouts = [];

  // View state
  var frame = 0, playing = false, speed = 1, loop = false, acc = 0, lastNow = 0;
  var sel = 0, follow = true, side = false, showAxes = false;

  // Scene
  var renderer = null, scene = null, camera = null, controls = null;
  var webglError = null;
  var selRing = null, scaleBar = null, axesLines = null;
  var P = null;  // scratch: one character's joint positions, world metres
  var labelAnchors = null;  // per stream: x, y, z, visible (side-by-side name labels)
  var sceneDirty = true, needRender = true, rafPending = false;
  var labels = { scale: null, streams: [], chars: [] };
  var tmpV = null;

  // ---------------------------------------------------------------------------------------------
  // Errors

  function errorText(e) {
    if (!e) return 'unknown error';
    if (typeof e === 'string') return e;
    return e.message || String(e);
  }

  function showMessage(text, isError) {
    var m = $('message');
    if (!m) return;
    m.textContent = text;
    m.className = isError ? 'error' : '';
    m.hidden = false;
  }

  function hideMessage() { var m = $('message'); if (m) m.hidden = true; }

  function fail(e) {
    var text = errorText(e);
    if (api.error) return;  // the first error is the one that matters
    api.error = text;
    pause();
    showMessage(text, true);
    writeState();
    if (window.console) console.error('kinesync viewer:', e);
  }

  function notice(text) {
    var n = $('notice');
    if (!n) return;
    n.hidden = false;
    n.textContent = (n.textContent ? n.textContent + '\n' : '') + text;
  }

  window.addEventListener('error', function (ev) {
    // A script that failed to load is reported on its element, not here; runtime errors are.
    if (ev && ev.error) fail(ev.error);
  });
  window.addEventListener('unhandledrejection', function (ev) { fail(ev.reason); });

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

  function inflate(packed, rawLen) {
    var forceJs = new URLSearchParams(location.search).get('inflate') === 'js';
    if (!forceJs && typeof DecompressionStream === 'function' && typeof Response === 'function' && typeof Blob === 'function') {
      var stream;
      try { stream = new Blob([packed]).stream().pipeThrough(new DecompressionStream('deflate')); } catch (e) { stream = null; }
      if (stream) {
        return new Response(stream).arrayBuffer().then(function (b) { return new Uint8Array(b); },
          function () { return zlibInflate(packed, rawLen); });  // the JS inflater says what is wrong
      }
    }
    return Promise.resolve().then(function () { return zlibInflate(packed, rawLen); });
  }

  // A zlib (RFC 1950) / deflate (RFC 1951) decoder, for browsers without DecompressionStream.
  var LEN_BASE = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258];
  var LEN_EXTRA = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0];
  var DIST_BASE = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073,
    4097, 6145, 8193, 12289, 16385, 24577];
  var DIST_EXTRA = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13];
  var CL_ORDER = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15];

  // Lookup table for canonical Huffman codes of the given lengths: entry = symbol << 4 | length,
  // indexed by the next `bits` input bits (codes arrive bit-reversed, least significant bit first).
  function huffTable(lengths, n) {
    var maxLen = 0, i;
    for (i = 0; i < n; i++) if (lengths[i] > maxLen) maxLen = lengths[i];
    if (maxLen === 0) return { bits: 1, table: new Int32Array(2).fill(-1) };
    var count = new Int32Array(16), next = new Int32Array(16);
    for (i = 0; i < n; i++) count[lengths[i]]++;
    count[0] = 0;
    var code = 0;
    for (var len = 1; len <= 15; len++) { code = (code + count[len - 1]) << 1; next[len] = code; }
    var size = 1 << maxLen, table = new Int32Array(size).fill(-1);
    for (i = 0; i < n; i++) {
      var l = lengths[i];
      if (!l) continue;
      var c = next[l]++, rev = 0;
      for (var k = 0; k < l; k++) { rev = (rev << 1) | (c & 1); c >>= 1; }
      for (var at = rev; at < size; at += 1 << l) table[at] = (i << 4) | l;
    }
    return { bits: maxLen, table: table };
  }

  function zlibInflate(src, expected) {
    if (src.length < 6) throw new Error('replay.ksview: the compressed frames are too short');
    var cmf = src[0], flg = src[1];
    if ((cmf & 15) !== 8 || ((cmf << 8) | flg) % 31 !== 0) throw new Error('replay.ksview: the frames are not a zlib stream');
    if (flg & 32) throw new Error('replay.ksview: zlib preset dictionaries are not supported');
    var out = new Uint8Array(expected), op = 0;
    var pos = 2, end = src.length, buf = 0, cnt = 0;
    function fill(n) {
      while (cnt < n) {
        if (pos > end + 4) throw new Error('replay.ksview: the compressed frames are truncated');
        buf |= (pos < end ? src[pos] : 0) << cnt;
        pos++;
        cnt += 8;
      }
    }
    function bits(n) {
      if (n === 0) return 0;
      fill(n);
      var v = buf & ((1 << n) - 1);
      buf >>>= n;
      cnt -= n;
      return v;
    }
    function decode(h) {
      fill(h.bits);
      var e = h.table[buf & ((1 << h.bits) - 1)];
      if (e < 0) throw new Error('replay.ksview: corrupt compressed frames (bad Huffman code)');
      var l = e & 15;
      buf >>>= l;
      cnt -= l;
      return e >> 4;
    }
    function put(b) {
      if (op >= expected) throw new Error('replay.ksview: the frames inflate to more than raw_len (' + expected + ') bytes');
      out[op++] = b;
    }
    var fixedLit = null, fixedDist = null;
    var last = 0;
    while (!last) {
      last = bits(1);
      var type = bits(2), lit, dist, i;
      if (type === 0) {
        var drop = cnt & 7;
        bits(drop);
        var len = bits(16), nlen = bits(16);
        if ((len ^ 0xffff) !== nlen) throw new Error('replay.ksview: corrupt compressed frames (stored block length)');
        for (i = 0; i < len; i++) put(bits(8));
        continue;
      }
      if (type === 1) {
        if (!fixedLit) {
          var fl = new Uint8Array(288);
          for (i = 0; i < 288; i++) fl[i] = i < 144 ? 8 : i < 256 ? 9 : i < 280 ? 7 : 8;
          var fd = new Uint8Array(30).fill(5);
          fixedLit = huffTable(fl, 288);
          fixedDist = huffTable(fd, 30);
        }
        lit = fixedLit;
        dist = fixedDist;
      } else if (type === 2) {
        var hlit = bits(5) + 257, hdist = bits(5) + 1, hclen = bits(4) + 4;
        var cl = new Uint8Array(19);
        for (i = 0; i < hclen; i++) cl[CL_ORDER[i]] = bits(3);
        var clt = huffTable(cl, 19);
        var lens = new Uint8Array(hlit + hdist);
        for (i = 0; i < hlit + hdist;) {
          var sym = decode(clt), rep = 0, val = 0;
          if (sym < 16) { lens[i++] = sym; continue; }
          if (sym === 16) {
            if (i === 0) throw new Error('replay.ksview: corrupt compressed frames (repeat without a length)');
            val = lens[i - 1];
            rep = 3 + bits(2);
          } else if (sym === 17) rep = 3 + bits(3);
          else rep = 11 + bits(7);
          if (i + rep > hlit + hdist) throw new Error('replay.ksview: corrupt compressed frames (code lengths overrun)');
          while (rep--) lens[i++] = val;
        }
        lit = huffTable(lens.subarray(0, hlit), hlit);
        dist = huffTable(lens.subarray(hlit), hdist);
      } else {
        throw new Error('replay.ksview: corrupt compressed frames (block type 3)');
      }
      for (;;) {
        var s = decode(lit);
        if (s < 256) { put(s); continue; }
        if (s === 256) break;
        s -= 257;
        if (s >= 29) throw new Error('replay.ksview: corrupt compressed frames (length code)');
        var n = LEN_BASE[s] + bits(LEN_EXTRA[s]);
        var ds = decode(dist);
        if (ds >= 30) throw new Error('replay.ksview: corrupt compressed frames (distance code)');
        var d = DIST_BASE[ds] + bits(DIST_EXTRA[ds]);
        if (d > op) throw new Error('replay.ksview: corrupt compressed frames (distance too far back)');
        if (op + n > expected) throw new Error('replay.ksview: the frames inflate to more than raw_len (' + expected + ') bytes');
        for (var k = 0; k < n; k++, op++) out[op] = out[op - d];
      }
    }
    if (op !== expected) throw new Error('replay.ksview: the frames inflate to ' + op + ' bytes, raw_len says ' + expected);
    // Adler-32 of the output, big-endian, after the last block (byte aligned).
    bits(cnt & 7);
    var want = ((bits(8) << 24) | (bits(8) << 16) | (bits(8) << 8) | bits(8)) >>> 0;
    if (pos - (cnt >> 3) > end) throw new Error('replay.ksview: the compressed frames are truncated (no checksum)');
    var a = 1, b = 0;
    for (var p = 0; p < op;) {
      var stop = Math.min(op, p + 3800);
      for (; p < stop; p++) { a += out[p]; b += a; }
      a %= 65521;
      b %= 65521;
    }
    if ((((b << 16) | a) >>> 0) !== want) throw new Error('replay.ksview: the frames fail their checksum (corrupt file)');
    return out;
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

  // ---------------------------------------------------------------------------------------------
  // State for tests: <pre id="ks-state">

  function writeState() {
    var el = $('ks-state');
    if (!el) return;
    var roots = {};
    if (api.ready) {
      streams.forEach(function (st, s) {
        roots[st.name] = chars.map(function (ch, c) { return rootOf(s, c, frame); });
      });
    }
    el.textContent = JSON.stringify({
      ready: api.ready, error: api.error, frame: api.frame, frames: api.frames,
      t: api.ready ? frameTime(frame) : null, roots: roots
    });
  }

  // ---------------------------------------------------------------------------------------------
  // Scene

  function buildScene() {
    if (typeof THREE.OrbitControls !== 'function') throw new Error('OrbitControls.js did not load (it must sit next to index.html)');
    var view = $('view');
    try {
      var probe = document.createElement('canvas');
      if (!(probe.getContext('webgl') || probe.getContext('experimental-webgl'))) throw new Error('no WebGL context');
      renderer = new THREE.WebGLRenderer({ antialias: true });
    } catch (e) {
      renderer = null;
      webglError = 'WebGL is not available in this browser (' + errorText(e) + '), so there is no 3D view; ' +
        'the timeline and the figures still work.';
      return;
    }
    renderer.setPixelRatio(Math.min(window.devicePixelRatio || 1, 2));
    view.insertBefore(renderer.domElement, view.firstChild);
    renderer.domElement.tabIndex = 0;
    renderer.domElement.addEventListener('webglcontextlost', function (ev) {
      ev.preventDefault();
      fail('The WebGL context was lost (GPU reset or too many pages with 3D open); reload the page.');
    });

    tmpV = new THREE.Vector3();
    scene = new THREE.Scene();
    scene.background = new THREE.Color(0x1b1d22);
    camera = new THREE.PerspectiveCamera(45, 1, 0.1, 4000);
    controls = new THREE.OrbitControls(camera, renderer.domElement);
    controls.enableKeys = false;  // the arrows step frames
    controls.minDistance = 0.4;
    controls.maxDistance = 1500;
    controls.addEventListener('change', requestRender);

    scene.add(new THREE.HemisphereLight(0xf2f5ff, 0x2a2a30, 0.85));
    var sun = new THREE.DirectionalLight(0xffffff, 0.65);
    sun.position.set(3, 8, 5);
    scene.add(sun);

    buildGround();

    var cyl = new THREE.CylinderBufferGeometry(1, 1, 1, 8, 1, true);
    var sph = new THREE.SphereBufferGeometry(1, 12, 8);
    streams.forEach(function (st) {
      var col = new THREE.Color(st.css);
      var boneMat, jointMat;
      if (st.isTruth) {
        boneMat = new THREE.MeshLambertMaterial({ color: col });
        jointMat = new THREE.MeshLambertMaterial({ color: new THREE.Color(0x8e9aa8) });
      } else {
        boneMat = new THREE.MeshLambertMaterial({
          color: col, emissive: col.clone().multiplyScalar(0.35), transparent: true, opacity: GHOST_OPACITY, depthWrite: false
        });
        jointMat = boneMat;
      }
      var bones = new THREE.InstancedMesh(cyl, boneMat, totalJoints);
      var joints = new THREE.InstancedMesh(sph, jointMat, totalJoints);
      [bones, joints].forEach(function (m) {
        m.instanceMatrix.setUsage(THREE.DynamicDrawUsage);
        m.frustumCulled = false;  // r111 culls by the geometry's own bounds, not the instances'
        m.renderOrder = st.index;
        m.visible = false;
        scene.add(m);
      });
      st.gfx = { bones: bones, joints: joints, drawnFrame: -1, drawnOffset: NaN };
    });

    // Selected character: a ring on the ground under it.
    selRing = new THREE.Mesh(new THREE.RingBufferGeometry(0.34, 0.4, 48),
      new THREE.MeshBasicMaterial({ color: 0xffffff, transparent: true, opacity: 0.55, depthWrite: false }));
    selRing.rotation.x = -Math.PI / 2;
    selRing.visible = false;
    scene.add(selRing);

    // Joint axes of the selected character, truth and shown ghosts.
    var nv = streams.length * maxJ * 6;
    var ag = new THREE.BufferGeometry();
    var apos = new THREE.BufferAttribute(new Float32Array(nv * 3), 3).setUsage(THREE.DynamicDrawUsage);
    var acol = new THREE.BufferAttribute(new Float32Array(nv * 3), 3);
    for (var v = 0; v < nv; v += 2) {
      var axis = (v / 2) % 3;
      for (var h = 0; h < 2; h++) {
        acol.array[(v + h) * 3] = axis === 0 ? 1 : 0.15;
        acol.array[(v + h) * 3 + 1] = axis === 1 ? 1 : 0.15;
        acol.array[(v + h) * 3 + 2] = axis === 2 ? 1 : 0.2;
      }
    }
    ag.setAttribute('position', apos);
    ag.setAttribute('color', acol);
    ag.setDrawRange(0, 0);
    axesLines = new THREE.LineSegments(ag, new THREE.LineBasicMaterial({ vertexColors: THREE.VertexColors }));
    axesLines.frustumCulled = false;
    axesLines.renderOrder = 100;
    axesLines.visible = false;
    scene.add(axesLines);

    P = new Float32Array(maxJ * 3);
    labelAnchors = new Float32Array(streams.length * 4);
  }

  function buildGround() {
    // The ground grid (1 m, and 10 m lines) covers where the characters go, with a margin.
    var minX = Infinity, maxX = -Infinity, minZ = Infinity, maxZ = -Infinity;
    var truth = streams[0];
    chars.forEach(function (ch, c) {
      var d = truth.data[c];
      for (var f = 0; f < F; f++) {
        if (!d.present[f]) continue;
        var x = d.root[f * 3] / 1000, z = d.root[f * 3 + 2] / 1000;
        if (x < minX) minX = x;
        if (x > maxX) maxX = x;
        if (z < minZ) minZ = z;
        if (z > maxZ) maxZ = z;
      }
    });
    if (!isFinite(minX)) { minX = maxX = minZ = maxZ = 0; }
    var cx = Math.round((minX + maxX) / 20) * 10, cz = Math.round((minZ + maxZ) / 20) * 10;
    var half = Math.max(maxX - cx, cx - minX, maxZ - cz, cz - minZ) + 100;
    var size = Math.ceil(half / 10) * 20;
    // Drawn by a shader on one plane rather than as GL lines: software rasterizers (SwiftShader)
    // drop lines that cross the camera's near plane, and this fades the 1 m lines where they would
    // crowd (and alias) far away.
    var ground = new THREE.Mesh(new THREE.PlaneBufferGeometry(size, size), new THREE.ShaderMaterial({
      uniforms: {
        uBg: { value: new THREE.Color(0x1f2227) },
        uMinor: { value: new THREE.Color(0x3c424b) },
        uMajor: { value: new THREE.Color(0x6a717c) },
        uAxis: { value: new THREE.Color(0x8a8f98) }
      },
      vertexShader: [
        'varying vec3 vWorld;',
        'void main() {',
        '  vec4 w = modelMatrix * vec4(position, 1.0);',
        '  vWorld = w.xyz;',
        '  gl_Position = projectionMatrix * viewMatrix * w;',
        '}'
      ].join('\n'),
      fragmentShader: [
        'uniform vec3 uBg, uMinor, uMajor, uAxis;',
        'varying vec3 vWorld;',
        // Coverage of the lines at multiples of `spacing`, about 1.2 pixels wide, and how crowded they are.
        'float grid(vec2 p, float spacing, out float crowd) {',
        '  vec2 c = p / spacing;',
        '  vec2 fw = max(fwidth(c), vec2(1e-6));',
        '  vec2 d = abs(fract(c - 0.5) - 0.5) / (fw * 1.2);',
        '  crowd = max(fw.x, fw.y);',
        '  return 1.0 - min(min(d.x, d.y), 1.0);',
        '}',
        'void main() {',
        '  float cm, cM;',
        '  float minor = grid(vWorld.xz, 1.0, cm) * (1.0 - smoothstep(0.15, 0.5, cm));',
        '  float major = grid(vWorld.xz, 10.0, cM) * (1.0 - smoothstep(0.3, 0.8, cM));',
        '  vec2 fa = max(fwidth(vWorld.xz), vec2(1e-6));',
        '  vec2 da = abs(vWorld.xz) / (fa * 1.5);',
        '  float axis = 1.0 - min(min(da.x, da.y), 1.0);',
        '  vec3 col = mix(uBg, uMinor, minor);',
        '  col = mix(col, uMajor, major);',
        '  col = mix(col, uAxis, axis);',
        '  float far = smoothstep(150.0, 400.0, length(vWorld.xz - cameraPosition.xz));',
        '  gl_FragColor = vec4(mix(col, vec3(0.106, 0.114, 0.133), far), 1.0);',
        '}'
      ].join('\n')
    }));
    ground.material.extensions.derivatives = true;
    // Pushed back in depth, so what lies on the ground (ring, scale bar) wins over it at any angle.
    ground.material.polygonOffset = true;
    ground.material.polygonOffsetFactor = 2;
    ground.material.polygonOffsetUnits = 4;
    ground.rotation.x = -Math.PI / 2;
    ground.position.set(cx, 0, cz);
    ground.renderOrder = -1;
    scene.add(ground);

    // The 1 m scale marker: a yellow bar along x with upright end ticks, on the grid line in front
    // of the selected character, labelled "1 m".
    var mat = new THREE.MeshBasicMaterial({ color: 0xffd54a });
    scaleBar = new THREE.Group();
    var bar = new THREE.Mesh(new THREE.BoxBufferGeometry(1, 0.012, 0.03), mat);
    bar.position.set(0.5, 0.006, 0);
    scaleBar.add(bar);
    [0, 1].forEach(function (x) {
      var tick = new THREE.Mesh(new THREE.BoxBufferGeometry(0.014, 0.16, 0.014), mat);
      tick.position.set(x, 0.08, 0);
      scaleBar.add(tick);
    });
    scene.add(scaleBar);
  }

  function zero16(A, k, n) { for (var i = 0; i < n; i++) A[k + i] = 0; }

  // A capsule body from P[p] to P[j]: the unit cylinder (y in [-0.5, 0.5]) scaled to radius r and the
  // bone's length, its y axis along the bone. Columns: u * r, dir * L, (u x dir) * r, midpoint.
  function writeBone(A, k, p, j, r) {
    var ax = P[p * 3], ay = P[p * 3 + 1], az = P[p * 3 + 2];
    var dx = P[j * 3] - ax, dy = P[j * 3 + 1] - ay, dz = P[j * 3 + 2] - az;
    var L = Math.sqrt(dx * dx + dy * dy + dz * dz);
    if (L < 1e-5) { zero16(A, k, 16); return; }
    dx /= L; dy /= L; dz /= L;
    var hx = 0, hz = 0;
    if (Math.abs(dx) < 0.9) hx = 1; else hz = 1;
    var ux = dy * hz, uy = dz * hx - dx * hz, uz = -dy * hx;  // dir x h
    var ul = Math.sqrt(ux * ux + uy * uy + uz * uz);
    ux /= ul; uy /= ul; uz /= ul;
    var vx = uy * dz - uz * dy, vy = uz * dx - ux * dz, vz = ux * dy - uy * dx;
    A[k] = ux * r; A[k + 1] = uy * r; A[k + 2] = uz * r; A[k + 3] = 0;
    A[k + 4] = dx * L; A[k + 5] = dy * L; A[k + 6] = dz * L; A[k + 7] = 0;
    A[k + 8] = vx * r; A[k + 9] = vy * r; A[k + 10] = vz * r; A[k + 11] = 0;
    A[k + 12] = ax + dx * L * 0.5; A[k + 13] = ay + dy * L * 0.5; A[k + 14] = az + dz * L * 0.5; A[k + 15] = 1;
  }

  // Fills P with character c's joints as stream s shows them at frame f (world metres, plus ox on x).
  function fillJoints(s, c, f, ox) {
    var d = streams[s].data[c], J = chars[c].J;
    var rx = d.root[f * 3] / 1000 + ox, ry = d.root[f * 3 + 1] / 1000, rz = d.root[f * 3 + 2] / 1000;
    var pos = d.pos, o = f * J * 3;
    for (var i = 0; i < J * 3; i += 3) {
      P[i] = rx + pos[o + i] / 1000;
      P[i + 1] = ry + pos[o + i + 1] / 1000;
      P[i + 2] = rz + pos[o + i + 2] / 1000;
    }
  }

  function sideOffset(st) { return side && !st.isTruth ? st.slot * SIDE_SPACING : 0; }

  function updateStream(s) {
    var st = streams[s], g = st.gfx, f = frame;
    g.bones.visible = g.joints.visible = st.shown;
    labelAnchors[s * 4 + 3] = 0;
    if (!st.shown) return;
    var ox = sideOffset(st);
    var B = g.bones.instanceMatrix.array, Jm = g.joints.instanceMatrix.array;
    var grow = st.isTruth ? 1 : GHOST_GROW, br = BONE_R * grow, jr = JOINT_R * grow;
    for (var c = 0; c < chars.length; c++) {
      var ch = chars[c], J = ch.J, base = ch.base * 16;
      if (!st.data[c].present[f]) {
        zero16(B, base, J * 16);
        zero16(Jm, base, J * 16);
        continue;
      }
      fillJoints(s, c, f, ox);
      var top = -Infinity;
      for (var j = 0; j < J; j++) {
        var k = base + j * 16;
        var x = P[j * 3], y = P[j * 3 + 1], z = P[j * 3 + 2];
        if (y > top) top = y;
        Jm[k] = jr; Jm[k + 1] = 0; Jm[k + 2] = 0; Jm[k + 3] = 0;
        Jm[k + 4] = 0; Jm[k + 5] = jr; Jm[k + 6] = 0; Jm[k + 7] = 0;
        Jm[k + 8] = 0; Jm[k + 9] = 0; Jm[k + 10] = jr; Jm[k + 11] = 0;
        Jm[k + 12] = x; Jm[k + 13] = y; Jm[k + 14] = z; Jm[k + 15] = 1;
        var p = ch.parents[j];
        if (p < 0) zero16(B, k, 16); else writeBone(B, k, p, j, br);
      }
      if (c === sel) {
        labelAnchors[s * 4] = P[0];
        labelAnchors[s * 4 + 1] = top + 0.18;
        labelAnchors[s * 4 + 2] = P[2];
        labelAnchors[s * 4 + 3] = 1;
      }
    }
    g.bones.instanceMatrix.needsUpdate = true;
    g.joints.instanceMatrix.needsUpdate = true;
  }

  var AXES_SCRATCH = new Float32Array(9);

  function updateAxes() {
    axesLines.visible = showAxes;
    if (!showAxes) return;
    var A = axesLines.geometry.attributes.position.array, v = 0, c = sel, f = frame;
    for (var s = 0; s < streams.length; s++) {
      var st = streams[s];
      if (!st.shown || !st.data[c].present[f]) continue;
      fillJoints(s, c, f, sideOffset(st));
      var J = chars[c].J, rot = st.data[c].rot, o = f * J * 4;
      for (var j = 0; j < J; j++) {
        var w = rot[o + j * 4], x = rot[o + j * 4 + 1], y = rot[o + j * 4 + 2], z = rot[o + j * 4 + 3];
        var n = Math.sqrt(w * w + x * x + y * y + z * z) || 1;
        w /= n; x /= n; y /= n; z /= n;
        // The rotation's columns: where the joint's x, y and z axes point.
        var cols = AXES_SCRATCH;
        cols[0] = 1 - 2 * (y * y + z * z); cols[1] = 2 * (x * y + w * z); cols[2] = 2 * (x * z - w * y);
        cols[3] = 2 * (x * y - w * z); cols[4] = 1 - 2 * (x * x + z * z); cols[5] = 2 * (y * z + w * x);
        cols[6] = 2 * (x * z + w * y); cols[7] = 2 * (y * z - w * x); cols[8] = 1 - 2 * (x * x + y * y);
        var px = P[j * 3], py = P[j * 3 + 1], pz = P[j * 3 + 2];
        for (var a = 0; a < 3; a++) {
          A[v * 3] = px; A[v * 3 + 1] = py; A[v * 3 + 2] = pz;
          A[v * 3 + 3] = px + cols[a * 3] * AXIS_LEN;
          A[v * 3 + 4] = py + cols[a * 3 + 1] * AXIS_LEN;
          A[v * 3 + 5] = pz + cols[a * 3 + 2] * AXIS_LEN;
          v += 2;
        }
      }
    }
    axesLines.geometry.attributes.position.needsUpdate = true;
    axesLines.geometry.setDrawRange(0, v);
  }

  function updateMarkers() {
    var d = streams[0].data[sel], f = frame;
    var on = !!(d && d.present[f]);
    selRing.visible = on;
    if (!on) return;
    var x = d.root[f * 3] / 1000, z = d.root[f * 3 + 2] / 1000;
    selRing.position.set(x, 0.008, z);
    scaleBar.position.set(Math.floor(x), 0, Math.floor(z) + 1);
  }

  function updateScene() {
    for (var s = 0; s < streams.length; s++) updateStream(s);
    updateAxes();
    updateMarkers();
  }

  // The follow camera: moves with the selected character's true root, keeping the view direction.
  function followTarget() {
    if (!controls || !follow) return;
    var d = streams[0].data[sel], f = frame;
    if (!d || !d.present[f]) return;
    var x = d.root[f * 3] / 1000, y = d.root[f * 3 + 1] / 1000, z = d.root[f * 3 + 2] / 1000;
    if (side) x += shownGhosts() * SIDE_SPACING * 0.5;
    var t = controls.target;
    camera.position.x += x - t.x;
    camera.position.y += y - t.y;
    camera.position.z += z - t.z;
    t.set(x, y, z);
    controls.update();
  }

  function initCamera() {
    if (!controls) return;
    var f0 = frame, d = streams[0].data[sel], r = null;
    for (var f = f0; f < F && !r; f++) if (d.present[f]) r = rootOf(0, sel, f);
    for (f = f0; f >= 0 && !r; f--) if (d.present[f]) r = rootOf(0, sel, f);
    if (!r) r = [0, 1, 0];
    controls.target.set(r[0], r[1], r[2]);
    camera.position.set(r[0] + 2.4, r[1] + 1.2, r[2] + 3.4);
    controls.update();
  }

  function shownGhosts() {
    var n = 0;
    streams.forEach(function (st) { if (!st.isTruth && st.shown) n++; });
    return n;
  }

  // ---------------------------------------------------------------------------------------------
  // Labels (HTML, projected): stream names in side-by-side mode, character ids, "1 m"

  function makeLabel(text, cls, color) {
    var el = document.createElement('div');
    el.className = 'label ' + cls;
    el.textContent = text;
    if (color) el.style.color = color;
    $('labels').appendChild(el);
    return { el: el, shown: true, x: NaN, y: NaN };
  }

  function buildLabels() {
    labels.scale = makeLabel('1 m', 'scale');
    labels.streams = streams.map(function (st) { return makeLabel(st.name, 'stream', st.css); });
    labels.chars = chars.slice(0, MAX_CHAR_LABELS).map(function (ch) { return makeLabel('#' + ch.id, 'char'); });
  }

  function placeLabel(L, x, y, z, visible, w, h) {
    if (visible) {
      tmpV.set(x, y, z).project(camera);
      visible = tmpV.z < 1 && tmpV.z > -1 && Math.abs(tmpV.x) < 1.2 && Math.abs(tmpV.y) < 1.2;
    }
    if (!visible) {
      if (L.shown) { L.el.style.display = 'none'; L.shown = false; }
      return;
    }
    if (!L.shown) { L.el.style.display = ''; L.shown = true; }
    var px = Math.round((tmpV.x + 1) * 0.5 * w), py = Math.round((1 - tmpV.y) * 0.5 * h);
    if (px !== L.x || py !== L.y) {
      L.x = px; L.y = py;
      L.el.style.transform = 'translate(-50%, -100%) translate(' + px + 'px,' + py + 'px)';
    }
  }

  function placeLabels() {
    var w = renderer.domElement.clientWidth, h = renderer.domElement.clientHeight;
    placeLabel(labels.scale, scaleBar.position.x + 0.5, 0.2, scaleBar.position.z, selRing.visible, w, h);
    streams.forEach(function (st, s) {
      placeLabel(labels.streams[s], labelAnchors[s * 4], labelAnchors[s * 4 + 1], labelAnchors[s * 4 + 2],
        side && st.shown && labelAnchors[s * 4 + 3] === 1, w, h);
    });
    var truth = streams[0];
    labels.chars.forEach(function (L, c) {
      var d = truth.data[c], f = frame, on = truth.shown && !!d.present[f];
      var x = 0, y = 0, z = 0;
      if (on) { x = d.root[f * 3] / 1000; y = d.root[f * 3 + 1] / 1000 + 1.0; z = d.root[f * 3 + 2] / 1000; }
      // In side-by-side mode the selected character's label gives way to the stream names.
      placeLabel(L, x, y, z, on && !(side && c === sel), w, h);
      L.el.style.fontWeight = c === sel ? 'bold' : '';
    });
  }

  // ---------------------------------------------------------------------------------------------
  // Rendering loop

  function requestRender() {
    needRender = true;
    schedule();
  }

  function schedule() {
    if (rafPending) return;
    rafPending = true;
    requestAnimationFrame(tick);
  }

  function tick(now) {
    rafPending = false;
    try {
      if (playing) {
        var dt = lastNow ? Math.min(0.25, (now - lastNow) / 1000) : 0;
        lastNow = now;
        acc += dt * HZ * speed;
        var steps = Math.floor(acc);
        if (steps > 0) {
          acc -= steps;
          var nf = frame + steps;
          if (nf > F - 1) {
            if (loop) nf = nf % F;
            else { nf = F - 1; pause(); }
          }
          applyFrame(nf);
        }
        if (playing) schedule();
      }
      if (needRender) render();
    } catch (e) {
      fail(e);
    }
  }

  function render() {
    needRender = false;
    if (!renderer) return;
    if (sceneDirty) { updateScene(); sceneDirty = false; }
    renderer.render(scene, camera);
    placeLabels();
  }

  function resize() {
    if (renderer) {
      var view = $('view');
      var w = Math.max(1, view.clientWidth), h = Math.max(1, view.clientHeight);
      renderer.setSize(w, h, false);
      camera.aspect = w / h;
      camera.updateProjectionMatrix();
    }
    layoutTimeline();
    requestRender();
  }

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
    return { frame: startFrame === null ? 0 : startFrame, autoplay: autoplay };
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
      updatePlayButton();
      if (opts.autoplay) play();
    }).catch(fail);
  }

  start();
})();
