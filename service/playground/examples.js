// One or more working requests per route, the same ones the README shows.
export const ROUTES = {
  '/v1/junctions': [
    ['crossroads with sidewalks', {
      arms: [{ direction: [1, 0], width: 7 }, { direction: [0, 1], width: 7 },
             { direction: [-1, 0], width: 7 }, { direction: [0, -1], width: 7 }],
      sidewalk: { width: 2, curb_height: 0.15 } }],
    ['tee from centerlines', {
      arms: [{ centerline: [[40, 0], [0, 0]], width: 8 },
             { centerline: [[0, 2, 30], [0, 0.5, 1]], width: 6 },
             { centerline: [[-40, 0.2], [-1, 0]], width: 8 }] }],
    ['roundabout', {
      arms: [{ direction: [1, 0], width: 8 }, { direction: [0, 1], width: 8 },
             { direction: [-1, 0], width: 8 }, { direction: [0, -1], width: 8 }],
      roundabout: { radius: 16, island_radius: 8 }, corner_radius: 5, sidewalk: { width: 2.5 } }],
    ['invalid: a negative width', {
      arms: [{ direction: [1, 0], width: 7 }, { direction: [0, 1], width: -7 },
             { direction: [-1, 0], width: 7 }] }],
  ],
  '/v1/roads': [
    ['banked road on terrain, props, LODs', {
      points: [[0, 0, 0], [60, 0, 25], [120, 0, -15], [190, 0, 10]], width: 8, shoulder: 1.5,
      conform: 'bank', banking: { max_degrees: 6 },
      terrain: { origin: [-30, -70], cell: 2, cols: 131, rows: 71,
                 noise: { seed: 5, amplitude: 12, wavelength: 70 } },
      flatten: { margin: 1.5, falloff: 10 },
      props: [{ name: 'guardrail', spacing: 4, offset: 5.5, side: 'both' },
              { name: 'lamp', spacing: 30, offset: 6.5, side: 'left', align: 'terrain' }],
      lods: [0.5, 2] }],
    ['s-curve', { points: [[0, 0, 0], [40, 0, 0], [80, 0, 30], [120, 0, 30]], width: 7 }],
  ],
  '/v1/networks': [
    ['a tee with a bend and sidewalks', {
      nodes: [{ id: 'c', position: [0, 0] }, { id: 'e', position: [60, 0] },
              { id: 'w', position: [-60, 0] }, { id: 's', position: [0, 0.5, 50] }],
      edges: [{ from: 'c', to: 'e' }, { from: 'w', to: 'c' },
              { from: 'c', to: 's', width: 6, points: [[8, 25]] }],
      sidewalk: { width: 2 } }],
    ['invalid: an unknown node', {
      nodes: [{ id: 'a', position: [0, 0] }, { id: 'b', position: [50, 0] }],
      edges: [{ from: 'a', to: 'c' }] }],
  ],
  '/v1/dungeons': [
    ['20 rooms on two floors', { seed: 42, generate: { count: 20, extent: [80, 80], floors: 2 } }],
    ['your own rooms', {
      seed: 7, obstacles: 'break',
      rooms: [{ x: 0, z: 0, w: 6, d: 5 }, { x: 14, z: 0, w: 5, d: 5 },
              { x: 7, z: 0, w: 5, d: 30 }, { x: 4, z: 12, w: 7, d: 6, floor: 1 }] }],
  ],
  '/v1/grids': [
    ['organic grid', { seed: 1, size: 10 }],
    ['square-relaxed grid', { seed: 1, size: 6, shape: 'square', points: 'poisson',
                              relax: { mode: 'square', iterations: 50 } }],
  ],
};

// Pretty-printed like a person would write it: short arrays of numbers on one line.
export function pretty(value) {
  return JSON.stringify(value, null, 2)
    .replace(/\[\s+(-?[\d.]+(,\s+-?[\d.]+)*)\s+\]/g, (m, inner) => '[' + inner.replace(/\s+/g, ' ') + ']');
}
