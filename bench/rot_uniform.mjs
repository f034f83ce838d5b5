// The peer of bench/bench_dungeon.c: rot.js ROT.Map.Uniform on a 200 x 200
// map, seeded, with its timeLimit raised so no run is cut short.
//   node bench/rot_uniform.mjs <node_dir> time layout|full <maps>
//     timed like bench_dungeon --time: PM_WARMUP untimed runs, then the
//     median of PM_RUNS runs, each the wall-clock mean over <maps> maps.
//     layout: create() alone (rooms and corridors); full: create() with a
//     callback that fills the 200 x 200 cell grid, the map a game uses.
//   node bench/rot_uniform.mjs <node_dir> quality <maps>
//     counts the maps where a corridor cell lies inside a room.
import { createRequire } from "node:module";
import path from "node:path";
const [nodeDir, what, a, b] = process.argv.slice(2);
const require = createRequire(path.resolve(nodeDir, "package.json"));
const ROT = require("rot-js");
const DUG = 0.1015;   // about 170 rooms per map, as bench_dungeon's set-up

function build(seed, fill) {
  ROT.RNG.setSeed(seed);
  const map = new ROT.Map.Uniform(200, 200, { roomDugPercentage: DUG, timeLimit: 1e9 });
  if (fill) {
    const cells = new Uint8Array(200 * 200);
    map.create((x, y, v) => { cells[y * 200 + x] = v; });
  } else {
    map.create();
  }
  return map;
}

function corridorCells(c) {
  const cells = [];
  const dx = Math.sign(c._endX - c._startX), dy = Math.sign(c._endY - c._startY);
  let x = c._startX, y = c._startY;
  for (;;) {
    cells.push([x, y]);
    if (x === c._endX && y === c._endY) break;
    x += dx; y += dy;
  }
  return cells;
}

if (what === "time") {
  const fill = a === "full", maps = Number(b || 20);
  const warmup = Number(process.env.PM_WARMUP ?? 2), runs = Math.max(1, Number(process.env.PM_RUNS ?? 5));
  const run = () => { for (let k = 0; k < maps; k++) build(k + 1, fill); };
  for (let w = 0; w < warmup; w++) run();
  const ms = [];
  for (let r = 0; r < runs; r++) {
    const t0 = process.hrtime.bigint();
    run();
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6 / maps);
  }
  ms.sort((x, y) => x - y);
  console.log(`${ms[runs >> 1].toFixed(4)} ms per map (${a})`);
} else {
  const maps = Number(a || 100);
  let rooms = 0, overlapping = 0, corridorsThrough = 0, corridors = 0;
  for (let k = 0; k < maps; k++) {
    const map = build(k + 1, false);
    const rs = map.getRooms();
    rooms += rs.length;
    let bad = false;
    for (const c of map.getCorridors()) {
      corridors++;
      let through = false;
      for (const [x, y] of corridorCells(c))
        for (const r of rs)
          if (x >= r.getLeft() && x <= r.getRight() && y >= r.getTop() && y <= r.getBottom()) through = true;
      if (through) { corridorsThrough++; bad = true; }
    }
    if (bad) overlapping++;
  }
  console.log(`rot.js Uniform 200x200: ${maps} maps, ${(rooms / maps).toFixed(1)} rooms per map, ` +
    `${overlapping} maps (${(100 * overlapping / maps).toFixed(1)}%) with corridors through rooms ` +
    `(${corridorsThrough} of ${corridors} corridors)`);
}
