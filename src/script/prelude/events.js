// The prelude, part events (see base.js): events and listeners.
  // ---- events ----------------------------------------------------------------------------
  const EVENTS = ['step', 'breakpoint', 'watchpoint', 'signal', 'syscall', 'thread', 'library', 'exit', 'trace'];
  const listeners = {};
  for (const t of EVENTS) listeners[t] = [];
  function checkType(type) {
    if (!EVENTS.includes(type)) {
      const near = typeof type === 'string' ? nearest(type, EVENTS) : null;
      throw new ScryError(`unknown event type ${JSON.stringify(type)}; types: ${EVENTS.join(' ')}` +
        (near ? `; did you mean '${near}'?` : ''));
    }
  }
  function addEventListener(type, fn) {
    checkType(type);
    if (typeof fn !== 'function') throw new TypeError(`addEventListener('${type}', fn): fn must be a function`);
    field(listeners[type], listeners[type].length, fn);
    if (type === 'thread') N.thread_events(true);
    listening();
  }
  // With a function: that one, true if it was there. Without: every listener of the type,
  // and how many there were (so `removeEventListener('step')` does what it says).
  function removeEventListener(type, fn) {
    checkType(type);
    let removed;
    if (fn === undefined) {
      removed = listeners[type].length;
      listeners[type].length = 0;
    } else {
      if (typeof fn !== 'function') throw new TypeError(`removeEventListener('${type}', fn): fn must be the function given to addEventListener (or leave it out to remove every '${type}' listener)`);
      const i = listeners[type].indexOf(fn);
      if (i >= 0) listeners[type].splice(i, 1);
      removed = i >= 0;
    }
    if (type === 'thread' && listeners.thread.length === 0) N.thread_events(false);
    listening();
    return removed;
  }
  // Breakpoints with a condition or a log (`breakpoint.set(at, {if, log})`), by id.
  const bpOptions = new Map();
  // Tells the engine which stops scripts decide on: those are reported during cont() with
  // only their own thread stopped, so letting the run go on costs nothing for the others.
  function listening() {
    let mask = 0;
    EVENTS.forEach((t, i) => {
      if (listeners[t].length > 0 || (t === 'breakpoint' && bpOptions.size > 0)) mask |= 1 << i;
    });
    N.listened(mask);
    N.trace_listening(listeners.trace.length > 0);
    N.listening(listeners.breakpoint.length > 0 || bpOptions.size > 0, listeners.watchpoint.length > 0,
      listeners.signal.length > 0, listeners.library.length > 0, listeners.syscall.length > 0);
  }
  // Which listener runs now (nested: the innermost), or null. An uncatchable interrupt (the
  // script budget, a signal to scry) unwinds past every catch and finally, so this is not
  // only restored by dispatch: chunkEnd() below resets it after every chunk.
  let inListener = 0;
  let listenerType = null;
  // What every event has besides its own fields, computed only when a listener asks.
  const EventProto = {
    get state() {
      return state;
    },
    get prev() {
      return prev;
    },
    get stop_reason() {
      return this.reason;
    },
    get symbol() {
      return this.pc === undefined ? undefined : N.symbol_at(this.pc);
    },
    get module() {
      return this.pc === undefined ? undefined : N.module_at(this.pc);
    },
    // What the stop prints: `breakpoint 1 at 0x... add+0x4 loop.c:15`.
    get text() {
      return N.last_stop_line();
    },
    // `loop.c:15`, and its line number alone, as the stop line shows them.
    get source() {
      return N.last_stop_source() ?? undefined;
    },
    get line() {
      const src = N.last_stop_source();
      const m = src ? /:(\d+)$/.exec(src) : null;
      return m ? Number(m[1]) : undefined;
    },
    get insn() {
      if (this.reason !== 'watchpoint') return undefined;
      const c = N.watch_culprit();
      return own(c, 'insn_addr') === undefined ? undefined : insnAt(c.insn_addr, own(c, 'insn'));
    },
    // In a step listener: the instruction this step executed (state.instruction is the next).
    get executed() {
      const i = N.executed();
      return i === undefined ? undefined : asInsn(i);
    },
    get insn_addr() {
      return this.reason === 'watchpoint' ? N.watch_culprit().insn_addr : undefined;
    },
  };
  setPrototypeOf(EventProto, RESULT);
  // How many times each listener (or breakpoint condition or log) ran.
  const listenerCalls = new WeakMap();
  // listeners(): every registered listener, in the order they run, with how often it ran.
  function listenerRows() {
    const rows = [];
    for (const type of EVENTS) {
      for (const fn of listeners[type]) {
        const src = String(Function.prototype.toString.call(fn)).replace(/\s+/g, ' ');
        const head = fn.name ? fn.name : src.length > 48 ? src.slice(0, 47) + '…' : src;
        rows.push({ type, fn: head, calls: listenerCalls.get(fn) || 0 });
      }
    }
    return resultRows(rows);
  }
  // Runs `fn(ev)` as a listener of `type` (`label` names it in errors).
  function callListener(type, label, fn, ev) {
    listenerCalls.set(fn, (listenerCalls.get(fn) || 0) + 1);
    try {
      return fn(ev);
    } catch (err) {
      const where = ` [in ${label}; target stopped: ${N.last_stop_line()}]`;
      if (err instanceof Error) {
        err.message += where;
        throw err;
      }
      throw new ScryError(`${label} threw ${String(err)}${where}`);
    }
  }
  // A breakpoint's own condition and log, before any listener: 'skip' when the condition is
  // false (the hit is let go, listeners never see it), 'continue' after a log line.
  // Several breakpoints at one address each decide on their own terms, as gdb's do: the hit
  // stops (for the listeners to see) if any plain one or any whose condition holds and that
  // does not log is there, named as that one; every log whose condition holds prints.
  function breakpointOptions(ev) {
    const ids = own(ev, 'breakpoint_ids') ?? [own(ev, 'breakpoint_id')];
    if (!ids.some((id) => bpOptions.has(id))) return undefined;
    const outer = listenerType;
    inListener++;
    listenerType = 'breakpoint';
    try {
      let logged = false;
      let stops;
      for (const id of ids) {
        const o = bpOptions.get(id);
        if (o && o.cond && !callListener('breakpoint', 'breakpoint condition', o.cond, ev)) continue;
        if (o && o.log) {
          // A log that returns nothing (undefined or null) only counts or collects: no line.
          const line = callListener('breakpoint', 'breakpoint log', o.log, ev);
          if (line !== undefined && line !== null) N.print(line);
          logged = true;
          continue;
        }
        if (stops === undefined) stops = id;
      }
      if (stops === undefined) return logged ? 'continue' : 'skip';
      if (stops !== own(ev, 'breakpoint_id')) {
        N.bp_fired(stops);
        field(ev, 'breakpoint_id', stops);
      }
      return undefined;
    } finally {
      inListener--;
      listenerType = outer;
    }
  }
  function dispatch(type, stop) {
    const ev = stop;
    if (getPrototypeOf(ev) !== EventProto) setPrototypeOf(ev, EventProto);
    // A culprit found with the hit comes as text: the event's getters give the instruction.
    if (Object.hasOwn(ev, 'insn')) delete ev.insn;
    if (Object.hasOwn(ev, 'insn_addr')) delete ev.insn_addr;
    const pre = type === 'breakpoint' && bpOptions.size > 0 ? breakpointOptions(ev) : undefined;
    if (pre === 'skip') return 'continue';
    const verdict = runListeners(type, ev);
    return verdict === undefined ? pre : verdict;
  }
  function runListeners(type, ev) {
    const ls = listeners[type];
    if (!ls || ls.length === 0) return undefined;
    if (type === 'signal') field(ev, 'deliver', true);
    let verdict;
    const fns = ls.slice();
    const outer = listenerType;
    inListener++;
    listenerType = type;
    try {
      for (let i = 0; i < fns.length; i++) {
        const fn = fns[i];
        const r = callListener(type, `${type} listener`, fn, ev);
        if (r === 'stop') verdict = 'stop';
        else if (r === 'continue' && verdict !== 'stop') verdict = 'continue';
      }
    } finally {
      inListener--;
      listenerType = outer;
    }
    if (type === 'signal' && own(ev, 'deliver') === false) N.suppress_signal();
    return verdict;
  }

  // What the run loop (in Rust) hands to listeners: a thread event carries its kind; the
  // verdict goes back ('stop', 'continue' or undefined).
  function onRunEvent(type, ev) {
    if (type === 'trace') return dispatchTrace(ev);
    if (type === 'thread') field(ev, 'kind', ev.reason === 'thread_start' ? 'start' : 'exit');
    return dispatch(type, ev);
  }

