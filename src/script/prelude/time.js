// The prelude, part time (see base.js): time (a recording and moving along it), watchpoints, system calls; closes the function.
  // ---- time: a recording of the selected thread, and moving along it ------------------------
  function optsObject(opts, what) {
    if (opts !== undefined && (typeof opts !== 'object' || opts === null)) throw new TypeError(`${what}: options must be an object such as {limit: 1000000}`);
    return opts;
  }
  define('record', guard('record', {
    start(opts) {
      N.rec_start(optsObject(opts, 'record.start'));
    },
    stop() {
      N.rec_stop();
    },
    status() {
      return N.rec_status();
    },
  }));
  define('history', guard('history', {
    writes(at, len) {
      if (at === undefined) throw new ScryError("history.writes(addr | 'symbol', len?) needs an address");
      // As watchpoint.set: a typed value is its storage, not the number it converts to.
      const h = at !== null && typeof at === 'object' ? at[HANDLE] : undefined;
      const rows = N.hist_writes(h ?? at, len);
      for (const r of rows) {
        hidden(r, LINE, own(r, 'line'));
        delete r.line;
        // A variable's values are typed, as state.var() gives them.
        for (const k of ['old', 'new']) {
          const v = own(r, k);
          if (v !== null && typeof v === 'object') field(r, k, typed(v));
        }
        result(r);
      }
      const left = own(rows, 'left_out');
      if (left !== undefined) hidden(rows, MORE, left);
      return result(rows);
    },
    steps(from, to) {
      for (const [k, v] of [['from', from], ['to', to]]) {
        if (v !== undefined && !(Number.isInteger(v) && v >= 0)) throw new ScryError(`history.steps(from, to): ${k} must be a step number, got ${String(v)}`);
      }
      return resultRows(N.hist_steps(from, to));
    },
    // The first recorded step (the latest with {last: true}) for which fn(step) is true.
    find(fn, opts) {
      if (typeof fn !== 'function') throw new TypeError("history.find(fn, {last}?): fn is a predicate of a step {step, tid, pc}, e.g. s => s.pc === symbol('stray')");
      const last = optsObject(opts, 'history.find') !== undefined && own(opts, 'last') === true;
      const st = N.rec_status();
      if (st === null) throw new ScryError('history.find: no recording (record.start() records from here on)');
      const batch = 10000;
      const first = own(st, 'first');
      const end = own(st, 'end');
      for (let i = 0; i * batch < end - first; i++) {
        const lo = last ? Math.max(first, end - (i + 1) * batch) : first + i * batch;
        const hi = last ? end - i * batch : Math.min(end, lo + batch);
        const rows = N.hist_steps(lo, hi);
        if (last) rows.reverse();
        for (const r of rows) if (fn(result(r))) return r;
      }
      return null;
    },
  }));
  function backwards(name, run) {
    noReentry(name);
    N.rec_reverse(true);
    try {
      return run();
    } finally {
      N.rec_reverse(false);
    }
  }
  define('reverse_step', (n = 1, opts) => {
    if (typeof n === 'object' && n !== null) {
      opts = n;
      n = 1;
    }
    if (typeof n === 'bigint') n = Number(n);
    if (!Number.isInteger(n) || n < 0) throw new ScryError(`reverse_step(n): n must be a non-negative integer, got ${String(n)}`);
    return backwards('reverse_step', () => asStop(N.run_step(onRunEvent, n, timeoutOf('reverse_step', opts))));
  });
  define('reverse_cont', (opts) => backwards('reverse_cont', () => asStop(N.run_cont(onRunEvent, timeoutOf('reverse_cont', opts)))));
  define('reverse_finish', (opts) => backwards('reverse_finish', () => asStop(N.run_reverse_finish(onRunEvent, timeoutOf('reverse_finish', opts)))));
  define('goto', (k) => {
    noReentry('goto');
    if (typeof k === 'bigint') k = Number(k);
    if (!Number.isInteger(k) || k < 0) throw new ScryError(`goto(step): step must be a step number of the recording (record.status() says them), got ${String(k)}`);
    return asStop(N.rec_goto(k));
  });
  define('step', step);
  define('cont', cont);
  define('finish', finish);
  define('next', next);
  define('output', () => N.output());
  define('status', () => result(N.status()));
  define('handle_signal', (sig, mode) => N.signal_mode(String(sig), String(mode)));
  define('symbol', (expr) => N.resolve(expr));
  define('symbols', symbols);
  define('modules', modules);
  define('lines', (where) => {
    if (typeof where !== 'string') throw new TypeError("lines('file.c:LINE'): where must be a string such as 'loop.c:15'");
    const res = N.lines(where);
    const addrs = own(res, 'rows');
    hidden(addrs, LINE, own(res, 'text'));
    return result(addrs);
  });
  define('line_at', (addr) => {
    if (addr === undefined) throw new ScryError('line_at(addr) needs an address (Number, BigInt or symbol)');
    return N.line_at(addr);
  });
  define('breakpoint', breakpoint);
  define('addEventListener', addEventListener);
  define('removeEventListener', removeEventListener);
  define('listeners', listenerRows);
  // Called by the engine after every chunk (never by scripts): a chunk starts outside any
  // listener. Returns the listener type an interrupt cut short, else null.
  function chunkEnd() {
    const cut = inListener > 0 ? listenerType : null;
    inListener = 0;
    listenerType = null;
    return cut;
  }

  define('watchpoint', guard('watchpoint', {
    set(at, access, name, opts) {
      if (at === undefined) throw new ScryError("watchpoint.set(addr | 'symbol', 'r'|'w'|'rw', name?, {len}?) needs a location");
      // The options may come second (`set('t->count', {len: 4})`) or third.
      if (typeof access === 'object' && access !== null && name === undefined && opts === undefined) {
        opts = access;
        access = undefined;
      }
      if (typeof name === 'object' && name !== null && opts === undefined) {
        opts = name;
        name = undefined;
      }
      if (typeof opts === 'object' && opts !== null) {
        for (const k of Object.keys(opts)) {
          if (k !== 'len') {
            const hint = k === 'if' ? " (a watchpoint has no condition: filter in addEventListener('watchpoint', e => ... 'continue'))" : '';
            throw new ScryError(`watchpoint.set(): no option '${k}'${hint}; it takes {len}`);
          }
        }
      }
      // A typed value is watched as itself (its storage, shown as its type), not as the
      // number it converts to (a pointer's pointee).
      const h = at !== null && typeof at === 'object' ? at[HANDLE] : undefined;
      return N.wp_set(h ?? at, access, name, opts);
    },
    remove(which) {
      N.wp_remove(which);
    },
    list() {
      return resultRows(N.wp_list());
    },
  }));
  // syscall.catch(what, {phase}?): what is a name, a number, an array of them, 'all' or a
  // group ('%file'); phase 'exit' (default), 'entry' or 'both'.
  define('syscall', guard('syscall', {
    catch(what, opts) {
      if (what === undefined) throw new ScryError("syscall.catch(what, {phase}?) needs a system call: 'openat', 257, ['open', 'close'], 'all' or '%file'");
      let phase;
      if (opts !== undefined) {
        if (typeof opts !== 'object' || opts === null) throw new TypeError("syscall.catch(what, {phase}): options must be an object such as {phase: 'entry'}");
        phase = own(opts, 'phase');
      }
      return N.sc_catch(what, phase);
    },
    uncatch(id) {
      N.sc_uncatch(id);
    },
    list() {
      const res = N.sc_list();
      const rows = own(res, 'rows');
      hidden(rows, LINE, own(res, 'text'));
      return resultRows(rows);
    },
  }));
  define('process', guard('process', {
    list() {
      const rows = N.processes();
      let text = 'pid\tstate\tthreads\tprogram';
      for (let i = 0; i < rows.length; i++) {
        const p = rows[i];
        text += `\n${p.pid}\t${p.state}\t${p.threads}\t${p.program}`;
      }
      hidden(rows, LINE, text);
      return resultRows(rows);
    },
    select(pid) {
      const selected = N.process_select(pid);
      // Where the newly selected process is, in the shape of a stop line.
      const pc = N.reg('rip');
      const sym = N.symbol_at(pc);
      const src = N.where_line();
      return `process ${selected} thread ${N.tid()} at ${hex(pc)}${sym ? ' ' + sym : ''}${src ? ' ' + src : ''}`;
    },
  }));
  define('thread', guard('thread', {
    list() {
      const rows = N.threads();
      // A table without the mostly-empty `selected` column: the selected thread's tid is
      // marked with `*` instead.
      const cell = (v, key) => (v === undefined || v === null ? '' : key === 'pc' ? hex(v) : String(v));
      let text = 'tid\tname\tstate\tpc\tsymbol';
      for (let i = 0; i < rows.length; i++) {
        const t = rows[i];
        text += `\n${t.tid}${own(t, 'selected') ? '*' : ''}\t${cell(t.name)}\t${cell(t.state)}\t${cell(t.pc, 'pc')}\t${cell(t.symbol)}`;
      }
      hidden(rows, LINE, text);
      return resultRows(rows);
    },
    select(tid) {
      N.thread_select(tid);
      // Where the newly selected thread is, in the shape of a stop line.
      const pc = N.reg('rip');
      const sym = N.symbol_at(pc);
      const src = N.where_line();
      return `thread ${N.tid()} at ${hex(pc)}${sym ? ' ' + sym : ''}${src ? ' ' + src : ''}`;
    },
  }));
  return chunkEnd;
});
