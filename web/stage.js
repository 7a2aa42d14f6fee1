// The three.js stage shared by the replay viewer (viewer.js) and the live workbench (live.js):
// renderer, camera with orbit controls, lights, resizing, and a render loop that draws on demand
// (while something plays, or once after a change), so a still page costs nothing and a
// software-rendered browser (the headless tests) stays responsive.
import * as THREE from 'three';
import { OrbitControls } from 'three/addons/controls/OrbitControls.js';

export function createStage(container) {
  const renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
  renderer.setPixelRatio(Math.min(window.devicePixelRatio, 2));
  container.appendChild(renderer.domElement);
  const scene = new THREE.Scene();
  scene.background = new THREE.Color(0xdde3ea);
  const camera = new THREE.PerspectiveCamera(45, 1, 0.05, 300);
  camera.position.set(3, 1.6, 3);
  const controls = new OrbitControls(camera, renderer.domElement);
  controls.target.set(0, 0.9, 0);
  controls.enableDamping = false;
  scene.add(new THREE.HemisphereLight(0xffffff, 0x667080, 2.2));
  const sun = new THREE.DirectionalLight(0xffffff, 1.6);
  sun.position.set(4, 8, 3);
  scene.add(sun);

  const stage = {
    THREE, renderer, scene, camera, controls,
    dirty: true,
    renders: 0, // frames drawn
    requestRender() {
      stage.dirty = true;
    },
    /// Starts the loop: tick(dt) then a render whenever active() or a render was requested, at
    /// most maxFps times a second.
    start(tick, active = () => false, maxFps = Infinity) {
      let last = performance.now();
      const loop = () => {
        const now = performance.now();
        if (now - last < 1000 / maxFps - 1) {
          requestAnimationFrame(loop);
          return;
        }
        const dt = Math.min((now - last) / 1000, 0.1);
        last = now;
        if (active() || stage.dirty) {
          stage.dirty = false;
          tick(dt);
          renderer.render(scene, camera);
          stage.renders++;
          stage.onRendered?.();
        }
        requestAnimationFrame(loop);
      };
      requestAnimationFrame(loop);
    },
    onRendered: null,
  };
  controls.addEventListener('change', () => stage.requestRender());

  function resize() {
    const { clientWidth: w, clientHeight: h } = container;
    renderer.setSize(Math.max(1, w), Math.max(1, h), false);
    camera.aspect = Math.max(1, w) / Math.max(1, h);
    camera.updateProjectionMatrix();
    stage.requestRender();
  }
  new ResizeObserver(resize).observe(container);
  resize();
  return stage;
}

/// Puts the camera `distance` m to the `side` of `target` (raised 0.9 m), looking at it.
export function placeCamera(stage, target, side, distance = 3.4) {
  const { THREE, camera, controls } = stage;
  controls.target.copy(target);
  camera.position.copy(target).addScaledVector(side, distance).add(new THREE.Vector3(0, 0.9, 0));
  controls.update();
  stage.requestRender();
}

/// Moves target and camera together so the camera keeps following `object`.
export function follow(stage, object) {
  const p = new THREE.Vector3();
  object.getWorldPosition(p);
  const delta = p.sub(stage.controls.target);
  stage.controls.target.add(delta);
  stage.camera.position.add(delta);
}
