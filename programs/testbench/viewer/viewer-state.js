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
 *
 * The page is in five classic scripts sharing their top-level names, loaded in this order:
 * viewer-state.js, viewer-load.js, viewer-scene.js, viewer-playback.js, viewer.js (which starts it).
 */
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

