// Where each JSON pointer (RFC 6901) lies in a JSON text: a small scanner
// that records the span of every value, so a problem's pointer can be shown
// at its place in the editor. Returns null for text that is not JSON (the
// server's 400 then names the line and column itself).

function escapeToken(t) { return t.replace(/~/g, '~0').replace(/\//g, '~1'); }

export function spans(text) {
  const map = new Map();
  let i = 0;
  const ws = () => { while (i < text.length && ' \t\r\n'.includes(text[i])) i++; };
  const fail = () => { throw new Error('not JSON'); };
  function str() {
    if (text[i] !== '"') fail();
    const start = i++;
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    if (i >= text.length) fail();
    i++;
    return JSON.parse(text.slice(start, i));
  }
  function value(ptr) {
    ws();
    const start = i;
    const c = text[i];
    if (c === '{') {
      i++; ws();
      if (text[i] === '}') i++;
      else for (;;) {
        ws();
        const keyStart = i;
        const key = str();
        ws();
        if (text[i++] !== ':') fail();
        const child = ptr + '/' + escapeToken(key);
        value(child);
        map.get(child).key = keyStart;
        ws();
        if (text[i] === ',') { i++; continue; }
        if (text[i++] !== '}') fail();
        break;
      }
    } else if (c === '[') {
      i++; ws();
      if (text[i] === ']') i++;
      else for (let n = 0; ; n++) {
        value(ptr + '/' + n);
        ws();
        if (text[i] === ',') { i++; continue; }
        if (text[i++] !== ']') fail();
        break;
      }
    } else if (c === '"') {
      str();
    } else {
      const m = /^(-?\d+(\.\d+)?([eE][+-]?\d+)?|true|false|null)/.exec(text.slice(i, i + 64));
      if (!m) fail();
      i += m[0].length;
    }
    map.set(ptr, { start, end: i });
  }
  try {
    value('');
    ws();
    if (i !== text.length) fail();
  } catch (e) {
    return null;
  }
  return map;
}

// Line and column (1-based) of an offset.
export function lineCol(text, offset) {
  let line = 1, col = 1;
  for (let k = 0; k < offset && k < text.length; k++) {
    if (text[k] === '\n') { line++; col = 1; } else col++;
  }
  return { line, col };
}

// The span a pointer names: its value, or for a member that is missing
// (e.g. "/arms/0/width" when width is absent) the closest parent that exists.
export function locate(text, pointer) {
  const map = spans(text);
  if (!map) return null;
  let p = pointer;
  for (;;) {
    const s = map.get(p);
    if (s) {
      const from = s.key !== undefined ? s.key : s.start;
      return { start: from, end: s.end, exact: p === pointer, ...lineCol(text, from) };
    }
    if (p === '') return null;
    p = p.slice(0, p.lastIndexOf('/'));
  }
}
