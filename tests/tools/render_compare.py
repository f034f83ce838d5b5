#!/usr/bin/env python3
"""three.js renders compact glTF like the plain one (issue 12).

Starts procmesh, fetches a grid, a junction and a 190 m road as plain GLB,
?compress=meshopt and ?compress=meshopt&quantize=true, renders each with
tools/render.sh (three.js with its MeshoptDecoder in headless Chromium,
shaded, no wireframe) and compares the pixels with the plain render:
meshopt (lossless, reordered) must be pixel-identical; meshopt + quantize
(positions within 1 mm, octahedral int8 normals) may differ in at most 0.2% of the
pixels by more than 8/255.

    render_compare.py PROCMESH SOURCE_DIR
"""
import os
import re
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request
import zlib

binary, source = sys.argv[1], sys.argv[2]
QUANT_MAX_FRACTION = 0.002


def png_pixels(path):
    """(width, height, rows of RGB bytes) of an 8-bit RGB/RGBA PNG."""
    data = open(path, 'rb').read()
    assert data[:8] == b'\x89PNG\r\n\x1a\n', path
    pos, idat, w = 8, b'', 0
    while pos < len(data):
        n, kind = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b'IHDR':
            w, h, depth, ctype, _, _, interlace = struct.unpack('>IIBBBBB', body)
            assert depth == 8 and ctype in (2, 6) and interlace == 0, (depth, ctype, interlace)
            bpp = 3 if ctype == 2 else 4
        elif kind == b'IDAT':
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line[k] for k in range(stride) if k % bpp < 3))
        prev = line
    return w, h, rows


def differing(a, b):
    """Pixels whose largest channel difference exceeds 8/255."""
    wa, ha, ra = png_pixels(a)
    wb, hb, rb = png_pixels(b)
    assert (wa, ha) == (wb, hb)
    n = 0
    for x, y in zip(ra, rb):
        if x == y:
            continue
        for i in range(0, len(x), 3):
            if max(abs(x[i] - y[i]), abs(x[i + 1] - y[i + 1]), abs(x[i + 2] - y[i + 2])) > 8:
                n += 1
    return n, wa * ha


def main():
    tmp = tempfile.mkdtemp(prefix='pm-render-')
    log = open(os.path.join(tmp, 'log'), 'w+')
    srv = subprocess.Popen([binary, '--bind', '127.0.0.1', '--port', '0'], stderr=log)
    try:
        port = None
        for _ in range(200):
            log.seek(0)
            m = re.search(r'"msg":"listening","port":(\d+)', log.read())
            if m:
                port = int(m.group(1))
                break
            time.sleep(0.05)
        assert port, 'procmesh did not start'
        cases = {
            'grid': ('/v1/grids?seed=42&size=8', None),
            'junction': ('/v1/junctions', b'{"arms": [{"direction": [1, 0], "width": 7}, '
                         b'{"direction": [0, 1], "width": 7}, {"direction": [-1, 0.2], "width": 7}],'
                         b' "sidewalk": {"width": 2}}'),
            # 190 m: positions as float32 lattice points through meshopt's
            # EXPONENTIAL filter, UVs beyond [0, 1] too (docs/api.md)
            'road': ('/v1/roads', b'{"points": [[0,0,0], [60,0,25], [120,0,-15], [190,0,10]],'
                     b' "width": 8, "shoulder": 1.5}'),
        }
        failures = 0
        for name, (path, body) in cases.items():
            pngs = {}
            for mode, query in (('plain', ''), ('meshopt', '&compress=meshopt'),
                                ('quantized', '&compress=meshopt&quantize=true')):
                sep = '&' if '?' in path else '?'
                url = f'http://127.0.0.1:{port}{path}{sep}format=glb{query}'
                req = urllib.request.Request(url, data=body, headers={'Content-Type': 'application/json'})
                glb = os.path.join(tmp, f'{name}.{mode}.glb')
                with urllib.request.urlopen(req) as r, open(glb, 'wb') as f:
                    f.write(r.read())
                png = os.path.join(tmp, f'{name}.{mode}.png')
                subprocess.run(['bash', os.path.join(source, 'tools/render.sh'), glb, png, 'iso'],
                               check=True, env=dict(os.environ, RENDER_WIRE='0'))
                pngs[mode] = png
            n, total = differing(pngs['plain'], pngs['meshopt'])
            print(f'{name}: meshopt differs from plain in {n} of {total} pixels')
            if n:
                failures += 1
            n, total = differing(pngs['plain'], pngs['quantized'])
            print(f'{name}: meshopt + quantize differs in {n} of {total} pixels ({100 * n / total:.3f}%)')
            if n > QUANT_MAX_FRACTION * total:
                failures += 1
        return 1 if failures else 0
    finally:
        srv.terminate()
        srv.wait(10)


sys.exit(main())
