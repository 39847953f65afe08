// scry's live view. Reads the session's event stream and draws it; sends nothing back.
// Everything from the stream is set as text (textContent) except the script area's markup,
// which scry sanitized before sending it.
'use strict';
(function () {
  const byId = (id) => document.getElementById(id);
  const ui = {
    program: byId('scry-program'),
    run: byId('scry-run'),
    conn: byId('scry-conn'),
    stop: byId('scry-stop'),
    scriptPanel: byId('scry-script-panel'),
    script: byId('scry-script'),
    sourcePath: byId('scry-source-path'),
    source: byId('scry-source'),
    disasm: byId('scry-disasm'),
    tid: byId('scry-tid'),
    regs: byId('scry-regs'),
    flags: byId('scry-flags'),
    gauge: byId('scry-gauge'),
    gaugeFill: byId('scry-gauge-fill'),
    gaugeMark: byId('scry-gauge-mark'),
    gaugeText: byId('scry-gauge-text'),
    frames: byId('scry-frames'),
    threads: byId('scry-threads'),
    points: byId('scry-points'),
    chunks: byId('scry-chunks'),
    output: byId('scry-output'),
  };
  const MAX_CHUNKS = 200;
  const MAX_OUTPUT = 64 * 1024;

  function make(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function span(cls, text) {
    return make('span', cls, text);
  }
  function emptyNote(text) {
    return make('div', 'empty', text);
  }
  // Keeps a scrolled-to-the-end box at the end while it grows.
  function stickToEnd(box, change) {
    const atEnd = box.scrollHeight - box.scrollTop - box.clientHeight < 24;
    change();
    if (atEnd) box.scrollTop = box.scrollHeight;
  }
  function bytes(n) {
    const units = ['B', 'KiB', 'MiB', 'GiB'];
    let i = 0;
    while (n >= 1024 && i < units.length - 1) {
      n /= 1024;
      i++;
    }
    return (i === 0 ? String(n) : n.toFixed(1)) + ' ' + units[i];
  }

  // ---- the session ----------------------------------------------------------------------
  function showStatus(s) {
    ui.run.className = 'run ' + (s.running ? 'running' : s.label === 'stopped' ? 'stopped' : 'ended');
    ui.run.querySelector('.label').textContent = s.label || '';
  }

  function showStop(line) {
    ui.stop.replaceChildren();
    if (!line) {
      ui.stop.textContent = 'no stop yet';
      return;
    }
    // `breakpoint 1 (name) at 0x401136 main+0x4 ...`: the reason and pc stand out.
    const reason = /^\S+(?: \d+)?/.exec(line)[0];
    const at = line.indexOf(' at 0x');
    ui.stop.append(span('reason', reason));
    if (at >= 0) {
      const pcEnd = line.indexOf(' ', at + 4);
      const end = pcEnd < 0 ? line.length : pcEnd;
      ui.stop.append(line.slice(reason.length, at) + ' at ', span('pc', line.slice(at + 4, end)), line.slice(end));
    } else {
      ui.stop.append(line.slice(reason.length));
    }
    document.title = 'scry · ' + line;
  }

  function row(cls, cells) {
    const r = make('div', 'row' + (cls ? ' ' + cls : ''));
    for (const [c, t] of cells) r.append(span(c, t));
    return r;
  }

  function showSource(src, note) {
    ui.source.replaceChildren();
    ui.sourcePath.textContent = src ? `${src.path}:${src.line}` : '';
    if (!src) {
      ui.source.append(emptyNote(note || 'no line information at pc'));
      return;
    }
    for (const [n, text] of src.rows) {
      ui.source.append(row(n === src.line ? 'current' : '', [['gutter', n], ['text', text]]));
    }
    scrollToCurrent(ui.source);
  }

  function scrollToCurrent(box) {
    const cur = box.querySelector('.current');
    if (cur) box.scrollTop = Math.max(0, cur.offsetTop - box.offsetTop - box.clientHeight / 3);
  }

  function showDisasm(rows) {
    ui.disasm.replaceChildren();
    if (!rows.length) {
      ui.disasm.append(emptyNote('nothing to disassemble'));
      return;
    }
    for (const d of rows) {
      ui.disasm.append(row(d.current ? 'current' : '', [
        ['bp', d.breakpoint ? '●' : ' '],
        ['addr', d.addr],
        ['sym', d.symbol || ''],
        ['text', d.text],
      ]));
    }
    scrollToCurrent(ui.disasm);
  }

  function showRegisters(p) {
    ui.regs.replaceChildren();
    ui.tid.textContent = p.tid ? `thread ${p.tid}` : '';
    for (const [name, value, changed] of p.registers) {
      const r = make('div', 'reg' + (changed ? ' changed' : ''));
      r.append(span('name', name), span('value', value));
      ui.regs.append(r);
    }
    if (!p.registers.length) ui.regs.append(emptyNote('no registers'));
    ui.flags.textContent = p.flags || '';
  }

  // The deepest stack use seen, per process and stack.
  let deepest = { key: '', used: 0 };
  function showGauge(s, pid) {
    ui.gauge.hidden = !s;
    if (!s) return;
    const key = `${pid} ${s.top}`;
    if (deepest.key !== key) deepest = { key, used: 0 };
    deepest.used = Math.max(deepest.used, s.used);
    const pct = (v) => (s.size > 0 ? Math.min(100, (100 * v) / s.size) : 0);
    ui.gaugeFill.style.width = pct(s.used) + '%';
    ui.gaugeMark.style.left = `calc(${pct(deepest.used)}% - 1px)`;
    ui.gaugeText.textContent = `${s.kind} stack: ${bytes(s.used)} used of ${bytes(s.size)} ` +
      `(${pct(s.used).toFixed(2)}%), deepest ${bytes(deepest.used)} · sp ${s.sp}`;
  }

  function showFrames(frames, note) {
    ui.frames.replaceChildren();
    for (const f of frames) {
      ui.frames.append(row(f.frame === 0 ? 'current' : '', [
        ['gutter', '#' + f.frame],
        ['addr', f.pc],
        ['sym', (f.inlined ? '[inlined] ' : '') + f.symbol],
        ['text', f.location],
      ]));
    }
    if (note) ui.frames.append(emptyNote(note));
    if (!frames.length && !note) ui.frames.append(emptyNote('no stack'));
  }

  function table(box, head, rows) {
    box.replaceChildren();
    const tr = make('tr');
    for (const h of head) tr.append(make('th', '', h));
    box.append(tr);
    for (const r of rows) box.append(r);
  }
  function tr(cells, cls) {
    const r = make('tr', cls || '');
    for (const c of cells) {
      const td = Array.isArray(c) ? make('td', c[0], c[1]) : make('td', '', c);
      td.title = td.textContent;
      r.append(td);
    }
    return r;
  }

  function showThreads(threads) {
    table(ui.threads, ['tid', 'name', 'state', 'pc', 'where'], threads.map((t) =>
      tr([t.tid + (t.selected ? ' *' : ''), t.name, t.state, t.pc, t.symbol], t.selected ? 'selected' : '')));
  }

  function showPoints(points) {
    table(ui.points, ['', 'id', 'name', 'addr', 'on', 'hits'], points.map((p) =>
      tr([p.kind === 'watchpoint' ? '◆' : '●', p.id, p.name, p.addr, p.what,
        p.pending ? ['pending', 'pending'] : ['hits', p.hits]])));
  }

  function showPanels(p) {
    const where = p.pid ? `${p.program} · pid ${p.pid}` : p.program || 'no process';
    ui.program.textContent = where;
    showStop(p.stop);
    showSource(p.source, p.note);
    showDisasm(p.disasm);
    showRegisters(p);
    showGauge(p.stack, p.pid);
    showFrames(p.frames, p.frames_note || (p.live ? null : p.note));
    showThreads(p.threads);
    showPoints(p.points);
  }

  function addChunks(list) {
    stickToEnd(ui.chunks, () => {
      for (const c of list) {
        const box = make('div', 'chunk');
        const meta = make('div', 'meta');
        meta.append(`#${c.seq} · ${c.at} · ${c.ms} ms${c.file !== '<input>' ? ' · ' + c.file : ''} · `,
          span(c.ok ? 'ok' : 'err', c.ok ? 'ok' : 'error'));
        box.append(meta, make('pre', 'sent', c.code.replace(/\n+$/, '')));
        if (c.answer) box.append(make('pre', 'answer' + (c.ok ? '' : ' err'), c.answer.replace(/\n+$/, '')));
        ui.chunks.append(box);
      }
      while (ui.chunks.childElementCount > MAX_CHUNKS) ui.chunks.firstElementChild.remove();
    });
  }

  function addOutput(o) {
    stickToEnd(ui.output, () => {
      let text = (o.reset ? '' : ui.output.textContent) + o.text;
      if (text.length > MAX_OUTPUT) text = text.slice(text.length - MAX_OUTPUT);
      ui.output.textContent = text;
    });
  }

  // ---- the script area ----------------------------------------------------------------------
  const SVG = 'http://www.w3.org/2000/svg';
  const nodes = new Map();

  function decode(b64) {
    const raw = atob(b64);
    const out = new Uint8ClampedArray(raw.length);
    for (let i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
    return out;
  }

  function update(e) {
    let n = nodes.get(e.k);
    if (!n || n.scryTag !== e.tag) {
      const fresh = e.svg ? document.createElementNS(SVG, e.tag) : document.createElement(e.tag);
      fresh.scryTag = e.tag;
      if (n) n.replaceWith(fresh);
      nodes.set(e.k, fresh);
      n = fresh;
    }
    const want = new Map(e.id ? [['id', e.id]] : []);
    for (const [k, v] of e.attrs) want.set(k, v);
    for (const a of Array.from(n.attributes)) {
      if (a.name !== 'style' && !want.has(a.name)) n.removeAttribute(a.name);
    }
    // Only changed values: setting a canvas's width, even to the same value, clears it.
    for (const [k, v] of want) if (n.getAttribute(k) !== v) n.setAttribute(k, v);
    const style = e.style.map(([k, v]) => k + ':' + v).join(';');
    if (n.scryStyle !== style) {
      n.removeAttribute('style');
      for (const [k, v] of e.style) n.style.setProperty(k, v);
      n.scryStyle = style;
    }
    if ('text' in e) {
      if (n.scryText !== e.text) {
        n.textContent = e.text;
        n.scryText = e.text;
      }
      n.scryHtml = n.scryKids = undefined;
    } else if ('html' in e) {
      if (n.scryHtml !== e.html) {
        n.innerHTML = e.html;
        n.scryHtml = e.html;
      }
      n.scryText = n.scryKids = undefined;
    } else {
      n.scryText = n.scryHtml = undefined;
      n.scryKids = e.kids;
    }
    if (e.canvas && e.canvas.px) {
      const px = e.canvas.px;
      const g = n.getContext('2d');
      if (g) g.putImageData(new ImageData(decode(px.data), px.w, px.h), px.x, px.y);
    }
  }

  function applyDom(d) {
    for (const e of d.set) update(e);
    for (const k of d.drop) {
      const n = nodes.get(k);
      if (n) n.remove();
      nodes.delete(k);
    }
    for (const e of d.set) {
      const n = nodes.get(e.k);
      if (n && n.scryKids) n.replaceChildren(...n.scryKids.map((k) => nodes.get(k)).filter(Boolean));
    }
    if (d.root) ui.script.replaceChildren(...d.root.map((k) => nodes.get(k)).filter(Boolean));
    ui.scriptPanel.hidden = ui.script.childElementCount === 0;
  }

  function reset() {
    nodes.clear();
    ui.script.replaceChildren();
    ui.scriptPanel.hidden = true;
    ui.chunks.replaceChildren();
    ui.output.textContent = '';
  }

  // ---- the stream -----------------------------------------------------------------------------
  const on = (stream, name, fn) =>
    stream.addEventListener(name, (ev) => {
      try {
        fn(ev.data ? JSON.parse(ev.data) : null);
      } catch (err) {
        console.error('scry view:', name, err);
      }
    });
  const stream = new EventSource('events');
  stream.addEventListener('open', () => {
    ui.conn.textContent = 'live';
    ui.conn.className = 'conn live';
  });
  stream.addEventListener('error', () => {
    if (stream.readyState === EventSource.CLOSED) return;
    ui.conn.textContent = 'reconnecting…';
    ui.conn.className = 'conn lost';
  });
  on(stream, 'reset', reset);
  on(stream, 'status', showStatus);
  on(stream, 'panels', showPanels);
  on(stream, 'chunks', addChunks);
  on(stream, 'output', addOutput);
  on(stream, 'dom', applyDom);
  on(stream, 'closed', () => {
    stream.close();
    ui.conn.textContent = 'session ended';
    ui.conn.className = 'conn lost';
  });
})();
