/* kinesync replay viewer: the state for tests, the three.js scene (skeletons, ghosts, axes, the follow camera), labels and the render loop.
 * (After viewer-state.js; the order: viewer-state.js.) */
'use strict';

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
  // The pop markers of the shown strategies for the selected character (frames, at most 200).
  var pops = [];
  if (api.ready) {
    streams.forEach(function (st) {
      if (!st.isTruth && st.shown) popsOf(st).forEach(function (t) { pops.push(timeFrame(t)); });
    });
    pops.sort(function (a, b) { return a - b; });
  }
  el.textContent = JSON.stringify({
    ready: api.ready, error: api.error, frame: api.frame, frames: api.frames, playing: playing,
    t: api.ready ? frameTime(frame) : null, roots: roots, pops: pops.slice(0, 200)
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

