// The prelude, part points (see base.js): breakpoints and symbols, settings and the persistent ctx.
  // ---- breakpoints and symbols -------------------------------------------------------------
  const breakpoint = guard('breakpoint', {
    // set(at, name?) or set(at, {name, if, log, force}).
    set(at, opts) {
      if (at === undefined) throw new ScryError("breakpoint.set(addr | 'symbol+off', name? | {name, if, log, force}) needs a location");
      let cond;
      let log;
      if (typeof opts === 'object' && opts !== null) {
        // An option it does not take is an error (before, `{condition: ...}` was ignored and
        // the breakpoint stopped on every hit).
        const takes = ['name', 'if', 'log', 'force', 'pending', 'hardware'];
        for (const k of Object.keys(opts)) {
          if (!takes.includes(k)) {
            const hint = k === 'condition' || k === 'cond' ? " (a condition is {if: e => ...})" : '';
            throw new ScryError(`breakpoint.set(): no option '${k}'${hint}; it takes ${takes.map((t) => `{${t}}`).join(', ')}`);
          }
        }
        cond = own(opts, 'if');
        log = own(opts, 'log');
        for (const [k, f] of [['if', cond], ['log', log]]) {
          if (f !== undefined && typeof f !== 'function') throw new TypeError(`breakpoint.set(at, {${k}}): ${k} must be a function of the event, e.g. e => e.state.registers.rdi > 5`);
        }
      }
      const id = N.bp_set(at, opts);
      if (cond || log) {
        bpOptions.set(id, { cond, log });
        listening();
      }
      return id;
    },
    remove(which) {
      const removed = N.bp_remove(which);
      if (bpOptions.size > 0) {
        const live = new Set(N.bp_list().map((b) => b.id));
        for (const id of bpOptions.keys()) if (!live.has(id)) bpOptions.delete(id);
        listening();
      }
      return removed;
    },
    list() {
      return resultRows(N.bp_list());
    },
  });
  // symbols(filter?, limit?) or symbols(filter?, {module, limit}).
  function symbols(filter, opts) {
    if (typeof filter === 'object' && filter !== null) {
      opts = filter;
      filter = undefined;
    }
    let limit = opts;
    let module;
    let exact = false;
    if (typeof opts === 'object' && opts !== null) {
      limit = opts.limit;
      module = opts.module === undefined || opts.module === null ? undefined : String(opts.module);
      exact = opts.exact === true;
    }
    const res = N.symbols(filter === undefined || filter === null ? undefined : String(filter), limit, module, exact);
    hidden(res.rows, MORE, own(res, 'more'));
    return resultRows(res.rows);
  }
  function modules() {
    const res = N.modules();
    const rows = own(res, 'rows');
    hidden(rows, LINE, own(res, 'text'));
    return resultRows(rows);
  }

  // ---- settings and the persistent ctx ------------------------------------------------------
  const configTarget = {};
  for (const k of ['timeout', 'script_timeout', 'output_limit', 'aslr', 'read_only', 'debug_dirs', 'stop_at', 'follow_fork', 'sysroot', 'solib_dirs', 'syscall_filter', 'schedule', 'max_processes']) {
    Object.defineProperty(configTarget, k, {
      enumerable: true,
      get: () => N.config_get(k),
      set: (v) => N.config_set(k, v),
    });
  }
  const ctx = {};
  hidden(ctx, 'reset', function () {
    for (const k of Object.keys(this)) delete this[k];
  });

  // For dom.js, which builds `dom` on the same native object.
  N.ScryError = ScryError;
  N.typed = typed;
  N.HANDLE = HANDLE;
  N.nearest = nearest;

  define('print', N.print);
  define('hex', hex);
  define('ctx', ctx);
  define('config', guard('config', configTarget));
  define('help', (topic) => (topic === undefined ? N.help() : N.help(String(topic))));
  define('state', state);
  define('prev', prev);
  define('spawn', (path, ...rest) => {
    noReentry('spawn');
    // spawn() alone runs the latest spawn again (gdb's `run`): program, arguments, settings.
    if (path !== undefined && typeof path !== 'string') throw new TypeError('spawn(path, ...args, {env, cwd, stdin}?): path must be a string (spawn() alone runs the latest one again)');
    let opts;
    if (rest.length && typeof rest[rest.length - 1] === 'object' && rest[rest.length - 1] !== null) opts = rest.pop();
    const hadProcess = own(N.status(), 'pid') !== undefined;
    const rec = path === undefined ? N.respawn() : N.spawn(path, rest.map(String), opts);
    // Listeners outlive a process: a later spawn() says they are still there.
    const kept = EVENTS.reduce((n, t) => n + listeners[t].length, 0);
    if (hadProcess && kept > 0) rec.line += ` [${kept} listener${kept === 1 ? '' : 's'} carried over: listeners()]`;
    return asStop(rec);
  });
  define('attach', (pid) => {
    noReentry('attach');
    return asStop(N.attach(pid));
  });
  define('core', (path, program) => {
    noReentry('core');
    if (typeof path !== 'string') throw new TypeError('core(path, program?): path must be a string');
    if (program !== undefined && typeof program !== 'string') throw new TypeError('core(path, program?): program must be a string');
    return asStop(program === undefined ? N.core_open(path) : N.core_open(path, program));
  });
  define('remote', (addr, opts) => {
    noReentry('remote');
    if (typeof addr !== 'string') throw new TypeError("remote(addr, {program}?): addr must be a string such as '127.0.0.1:1234'");
    if (opts === undefined) opts = {};
    if (typeof opts !== 'object' || opts === null) throw new TypeError('remote: options must be an object such as {program: "./prog"}');
    for (const k of Object.keys(opts)) if (k !== 'program') throw new TypeError(`remote: unknown option '${k}' (program)`);
    if (opts.program !== undefined && typeof opts.program !== 'string') throw new TypeError('remote: program must be a string');
    return asStop(opts.program === undefined ? N.remote_open(addr) : N.remote_open(addr, opts.program));
  });
  define('gcore', (path, opts) => {
    if (opts === undefined && path !== null && typeof path === 'object') { opts = path; path = undefined; }
    if (path !== undefined && typeof path !== 'string') throw new TypeError('gcore(path?, {overwrite, timeout}?): path must be a string');
    if (opts === undefined) opts = {};
    if (typeof opts !== 'object' || opts === null) throw new TypeError('gcore: options must be an object such as {overwrite: true}');
    for (const k of Object.keys(opts)) if (k !== 'overwrite' && k !== 'timeout') throw new TypeError(`gcore: unknown option '${k}' (overwrite, timeout)`);
    if (opts.overwrite !== undefined && typeof opts.overwrite !== 'boolean') throw new TypeError('gcore: overwrite must be true or false');
    if (opts.timeout !== undefined && typeof opts.timeout !== 'number') throw new TypeError('gcore: timeout must be a number of seconds');
    return result(N.gcore(path, opts.overwrite, opts.timeout));
  });
  define('detach', () => {
    noReentry('detach');
    return asStop(N.detach());
  });
  define('kill', () => {
    noReentry('kill');
    return asStop(N.kill());
  });
