// Small page helpers shared by the workbench's modules (live.js, live_tune.js, live_pointer.js).

/// The page's element with this id.
export const $ = (id) => document.getElementById(id);
/// Degrees per radian: the page shows degrees, requests and frames carry radians.
export const DEG = 180 / Math.PI;

/// An <option> for a select.
export function option(value, text = value) {
  const o = document.createElement('option');
  o.value = value;
  o.textContent = text;
  return o;
}
