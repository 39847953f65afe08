// The prelude, part runs (see base.js): running, and tracepoints' records.
  // ---- running ---------------------------------------------------------------------------
  // The runs themselves (what steps, where a next() or finish() ends) are Rust's; these only
  // check their arguments.
  function noReentry(name) {
    if (inListener > 0) {
      throw new ScryError(`${name}() cannot be called inside a listener; return 'continue' or 'stop' from it instead`);
    }
  }
  // A run's options, checked: an option it does not take is an error naming those it does
  // (before, `step({into: true})` ran one instruction as if nothing had been asked).
  function runOpts(name, opts, takes = ['timeout']) {
    if (opts === undefined) return {};
    if (typeof opts !== 'object' || opts === null) throw new TypeError('options must be an object such as {timeout: 5}');
    for (const k of Object.keys(opts)) {
      if (takes.includes(k)) continue;
      if (name === 'step' && k === 'into') {
        throw new ScryError('step(n) runs n instructions and enters every call already; a source line that enters calls (gdb\'s step) is next({into: true})');
      }
      throw new ScryError(`${name}(): no option '${k}'; it takes ${takes.map((t) => `{${t}}`).join(', ')}`);
    }
    return opts;
  }
  const timeoutOf = (name, opts) => runOpts(name, opts).timeout;
  function step(n = 1, opts) {
    noReentry('step');
    if (typeof n === 'object' && n !== null) {
      opts = n;
      n = 1;
    }
    if (typeof n === 'bigint') n = Number(n);
    if (!Number.isInteger(n) || n < 0) throw new ScryError(`step(n): n must be a non-negative integer, got ${String(n)}`);
    return afterRun(() => N.run_step(onRunEvent, n, timeoutOf('step', opts)));
  }
  // A run, and the trace listeners' errors it met, said once.
  function afterRun(run) {
    try {
      return asStop(run());
    } finally {
      traceErrorsReport();
    }
  }
  function cont(opts) {
    noReentry('continue');
    return afterRun(() => N.run_cont(onRunEvent, timeoutOf('cont', opts)));
  }
  // Runs until the current function returns to its caller; other stops end it early.
  function finish(opts) {
    noReentry('finish');
    return afterRun(() => N.run_finish(onRunEvent, timeoutOf('finish', opts)));
  }
  // Steps to the next source line of this function, running over calls; with {into: true},
  // entering calls to functions with lines (gdb's step).
  function next(opts) {
    noReentry('next');
    const o = runOpts('next', opts, ['timeout', 'into']);
    return afterRun(() => N.run_next(onRunEvent, o.timeout, !!o.into));
  }

  // ---- tracepoints ------------------------------------------------------------------------
  // A record of a tracepoint's hit, collected while the program ran on: what it holds is all
  // there is (no live reads: the program has moved on).
  const tpFilters = new Map();
  const traceErrors = { count: 0, first: null };
  const TraceProto = {
    memory(addr) {
      if (addr === undefined) throw new ScryError('e.memory(addr) needs an address');
      const a = BigInt(typeof addr === 'object' && addr !== null ? N.resolve(addr) : addr);
      for (const c of this.chunks) {
        const start = BigInt(c.addr);
        if (a >= start && a <= start + BigInt(c.bytes.length) && !(c.error && c.bytes.length === 0)) {
          return new TraceBytes(c, Number(a - start), this.id);
        }
      }
      const have = this.chunks.map((c) => `${c.expr}: ${c.error && c.bytes.length === 0 ? c.error : `${c.bytes.length} bytes at ${hex(c.addr)}`}`);
      const bad = this.chunks.find((c) => c.error && BigInt(c.addr) === a);
      if (bad) throw new ScryError(`${hex(a)} (${bad.expr}) was ${bad.error} when tracepoint ${this.id} hit`);
      throw new ScryError(`${hex(a)} is not in what tracepoint ${this.id} collected (${have.join('; ') || 'no memory'}): add {mem, len} to its collect`);
    },
    get symbol() {
      return N.symbol_at(this.pc);
    },
    get source() {
      const p = N.line_at(this.pc);
      return p ? `${p.file}:${p.line}` : undefined;
    },
    get line() {
      const p = N.line_at(this.pc);
      return p ? p.line : undefined;
    },
  };
  setPrototypeOf(TraceProto, RESULT);
  // Reads over one collected range: as state.memory(a) reads, within the bytes collected.
  class TraceBytes {
    constructor(chunk, off, id) {
      hidden(this, 'c', chunk);
      hidden(this, 'off', off);
      hidden(this, 'id', id);
    }
    need(n) {
      const c = this.c;
      if (this.off + n > c.bytes.length) {
        throw new ScryError(`${n} bytes at ${hex(BigInt(c.addr) + BigInt(this.off))}: tracepoint ${this.id} collected ${c.bytes.length} bytes of ${c.expr} at ${hex(c.addr)}${c.error ? ` (${c.error} after them)` : ''}`);
      }
      return new DataView(c.bytes.buffer, c.bytes.byteOffset + this.off, n);
    }
    str() {
      const b = this.c.bytes.subarray(this.off);
      let s = '';
      for (let i = 0; i < b.length && b[i] !== 0; i++) s += String.fromCharCode(b[i]);
      try {
        return decodeURIComponent(escape(s));
      } catch (e) {
        return s;
      }
    }
    bytes(n) {
      const b = this.c.bytes.subarray(this.off, n === undefined ? undefined : this.off + n);
      return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
    }
    u8() { return this.need(1).getUint8(0); }
    i8() { return this.need(1).getInt8(0); }
    u16() { return this.need(2).getUint16(0, true); }
    i16() { return this.need(2).getInt16(0, true); }
    u32() { return this.need(4).getUint32(0, true); }
    i32() { return this.need(4).getInt32(0, true); }
    f32() { return this.need(4).getFloat32(0, true); }
    f64() { return this.need(8).getFloat64(0, true); }
    u64() {
      const v = this.need(8).getBigUint64(0, true);
      return v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
    }
    i64() {
      const v = this.need(8).getBigInt64(0, true);
      return v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= -BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
    }
    u64n() { return this.need(8).getBigUint64(0, true); }
    i64n() { return this.need(8).getBigInt64(0, true); }
  }
  // A batch of records to the listeners, each after its tracepoint's {if}. A listener's
  // exception is counted, not thrown (the program runs on; one report at the end of the
  // run). The id of the first record a listener asked a stop at, if any.
  function dispatchTrace(batch) {
    const fns = listeners.trace.slice();
    const outer = listenerType;
    inListener++;
    listenerType = 'trace';
    let asked;
    try {
      for (let i = 0; i < batch.length; i++) {
        const ev = batch[i];
        setPrototypeOf(ev, TraceProto);
        try {
          const cond = tpFilters.get(ev.id);
          if (cond && !cond(ev)) continue;
          for (let j = 0; j < fns.length; j++) {
            const r = fns[j](ev);
            if ((r === 'stop' || traceStopAsked) && asked === undefined) asked = ev.id;
            traceStopAsked = false;
          }
        } catch (err) {
          traceStopAsked = false;
          if (traceErrors.count++ === 0) traceErrors.first = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
        }
      }
    } finally {
      inListener--;
      listenerType = outer;
      for (const fn of fns) listenerCalls.set(fn, (listenerCalls.get(fn) || 0) + batch.length);
    }
    return asked;
  }
  function traceErrorsReport() {
    if (traceErrors.count === 0) return;
    const n = traceErrors.count;
    N.print(`[a trace listener threw ${n === 1 ? 'once' : `${n} times`}; the first: ${traceErrors.first}]`);
    traceErrors.count = 0;
    traceErrors.first = null;
  }
  let traceStopAsked = false;
  function stop() {
    if (listenerType !== 'trace') throw new ScryError("stop() asks for a stop from inside a trace listener (elsewhere, return 'stop' from the listener)");
    traceStopAsked = true;
  }
  // An {if} of the form `e => e.registers.REG OP N` (REG collected, OP a comparison, N a
  // non-negative integer) is tested in the probe itself, with the same meaning (the
  // register's exact unsigned value against N): a hit it turns away writes no record. Any
  // other {if} runs here, on each record. [reg, op, N], or undefined.
  const COND_PARAM = /^\s*(?:\(\s*([A-Za-z_$][\w$]*)\s*\)|([A-Za-z_$][\w$]*))\s*=>\s*([^]*)$/;
  const COND_BODY = /^\s*([A-Za-z_$][\w$]*)\.registers\.([a-z0-9]+)\s*(===|==|!==|!=|<=|>=|<|>)\s*(0x[0-9a-fA-F]+|[0-9]+)\s*$/;
  function probeCond(fn, collect) {
    const m = COND_PARAM.exec(Function.prototype.toString.call(fn));
    if (!m) return undefined;
    const b = COND_BODY.exec(m[3]);
    if (!b || b[1] !== (m[1] ?? m[2])) return undefined;
    const collected = Array.isArray(collect) ? collect.includes(b[2]) : collect === b[2];
    const n = BigInt(b[4]);
    return collected && n < 1n << 64n ? [b[2], b[3], n] : undefined;
  }
  define('tracepoint', guard('tracepoint', {
    // set(where, {collect, if, full}): where is a function (its first instruction), a
    // file:line or an address.
    set(where, opts) {
      if (where === undefined) throw new ScryError("tracepoint.set(where, {collect: ['rdi', {mem: 'rsi', len: 16}], if, full}) needs a location");
      if (opts !== undefined && (typeof opts !== 'object' || opts === null)) throw new TypeError("tracepoint.set(where, {collect, if, full}): options must be an object");
      const cond = opts === undefined ? undefined : own(opts, 'if');
      if (cond !== undefined && typeof cond !== 'function') throw new TypeError('tracepoint.set(where, {if}): if must be a function of the record, e.g. e => e.registers.rdi > 4096');
      const collect = opts === undefined ? undefined : own(opts, 'collect');
      const r = N.tp_set(where, collect, opts === undefined ? undefined : own(opts, 'full'), cond ? probeCond(cond, collect) : undefined);
      if (cond) tpFilters.set(r.id, cond);
      return r.id;
    },
    remove(id) {
      const removed = N.tp_remove(id);
      tpFilters.delete(id);
      return removed;
    },
    list() {
      const rows = N.tp_list();
      for (const r of rows) hidden(result(r), LINE, `${r.id}\t${r.mode}\t${r.mode === 'pending' ? r.where : r.symbol ?? hex(r.addr)}\thits ${r.hits}, delivered ${r.delivered}, lost ${r.lost}${r.filtered !== undefined ? `, filtered in the probe ${r.filtered}` : ''}${r.why ? `\t(trap: ${r.why})` : ''}`);
      return result(rows);
    },
  }));
  define('stop', stop);

