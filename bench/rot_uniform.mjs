// The peer of bench/bench_dungeon.c: rot.js ROT.Map.Uniform on a 200 x 200
// map, seeded, with its timeLimit raised so no run is cut short. Counts the
// maps where a corridor cell lies inside a room's interior.
//   node bench/rot_uniform.mjs <node_dir> <maps> [dug_percentage]
import { createRequire } from "node:module";
import path from "node:path";
const [nodeDir, mapsArg, dugArg] = process.argv.slice(2);
const require = createRequire(path.resolve(nodeDir, "package.json"));
const ROT = require("rot-js");
const maps = Number(mapsArg || 200), dug = Number(dugArg || 0.105);

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

let total = 0, rooms = 0, overlapping = 0, corridorsThrough = 0, corridors = 0;
for (let k = 0; k < maps; k++) {
  ROT.RNG.setSeed(k + 1);
  const t0 = process.cpuUsage();
  const map = new ROT.Map.Uniform(200, 200, { roomDugPercentage: dug, timeLimit: 1e9 });
  map.create();
  const dt = process.cpuUsage(t0);   // CPU time, as bench_dungeon measures
  total += (dt.user + dt.system) / 1e3;
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
  `${(total / maps).toFixed(3)} ms per map, ${overlapping} maps (${(100 * overlapping / maps).toFixed(1)}%) ` +
  `with corridors through rooms (${corridorsThrough} of ${corridors} corridors)`);
console.log(`rot_ms_per_map ${(total / maps).toFixed(4)}`);
console.log(`rot_rooms_per_map ${(rooms / maps).toFixed(1)}`);
