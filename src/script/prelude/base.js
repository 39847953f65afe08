// The public JS API of scry, built once per session on the native object N.
// Frames from the prelude are hidden from users' stack traces.
// The prelude is one function, (function (N) { ... }), whose body is split by topic
// over the files of this folder; script/mod.rs joins them in this order: base,
// machine, values, state, events, runs, points, time. Each part sees every
// declaration of the others (one scope): none is valid JavaScript alone.
// This part: opens the function every part is the body of; its helpers: "did you mean", numbers, the built-in results.
(function (N) {
  'use strict';
  const g = globalThis;
  // Keys of scry's own: an object carrying LINE prints as that line, an array carrying MORE
  // says how many rows a limit left out. Unregistered symbols, so that no script defines
  // them by accident (on Object.prototype, say).
  const LINE = Symbol('scry.line');
  const MORE = Symbol('scry.more');
  // What the prelude relies on, taken before any user code can replace it. Fields of scry's
  // own records are read with own() and written with defineProperty, so setters and getters
  // a script puts on Object.prototype can neither run inside scry nor feed it false values.
  const { defineProperty, setPrototypeOf, getPrototypeOf, keys } = Object;
  const hasOwn = Object.hasOwn;
  const own = (obj, key) => (hasOwn(obj, key) ? obj[key] : undefined);
  const hidden = (obj, key, value) =>
    defineProperty(obj, key, { __proto__: null, value, enumerable: false, configurable: true, writable: true });
  const field = (obj, key, value) =>
    defineProperty(obj, key, { __proto__: null, value, enumerable: true, configurable: true, writable: true });
  const define = (name, value) => hidden(g, name, value);
  defineProperty(g, '__scryLine', { __proto__: null, value: LINE });
  defineProperty(g, '__scryMore', { __proto__: null, value: MORE });
  // scry formats errors itself; a prepareStackTrace hook would run user code inside every
  // error scry makes (possibly while it answers another call).
  defineProperty(Error, 'prepareStackTrace', { value: undefined, writable: false, configurable: false });

  class ScryError extends Error {
    constructor(message) {
      super(message);
      hidden(this, 'name', 'ScryError');
    }
  }

  // ---- "did you mean" --------------------------------------------------------------------
  function distance(a, b) {
    const row = Array.from({ length: b.length + 1 }, (_, i) => i);
    for (let i = 1; i <= a.length; i++) {
      let diag = row[0];
      row[0] = i;
      for (let j = 1; j <= b.length; j++) {
        const keep = row[j];
        row[j] = Math.min(row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
        diag = keep;
      }
    }
    return row[b.length];
  }
  function nearest(name, candidates) {
    if (name.length > 64) return null; // no typo is that long
    let best = null;
    let bestScore = Infinity;
    const lower = name.toLowerCase();
    for (const c of candidates) {
      const cl = c.toLowerCase();
      let score = distance(lower, cl);
      if (cl.startsWith(lower) || lower.startsWith(cl)) score = Math.min(score, 1);
      else if (lower.length >= 3 && cl.startsWith(lower.slice(0, 3))) score = Math.min(score, 2);
      if (score < bestScore) {
        best = c;
        bestScore = score;
      }
    }
    return bestScore <= Math.max(2, Math.floor(name.length / 3)) ? best : null;
  }
  // Unknown properties of scry's objects are errors that name the closest real one and the
  // help topic that lists them all.
  const TOPIC_OF = { state: 'state', prev: 'state', breakpoint: 'break', watchpoint: 'break', thread: 'run', config: 'util', syscall: 'syscalls' };
  // What gdb (or another debugger) calls a property scry names otherwise, by object.
  const ALIASES = {
    __proto__: null,
    'state.registers': { __proto__: null, pc: 'rip', ip: 'rip', sp: 'rsp', fp: 'rbp' },
    breakpoint: { __proto__: null, delete: 'remove', del: 'remove', clear: 'remove', add: 'set', create: 'set', insert: 'set' },
    watchpoint: { __proto__: null, delete: 'remove', del: 'remove', clear: 'remove', add: 'set', create: 'set', insert: 'set' },
  };
  function unknownProperty(label, t, k) {
    const alias = ALIASES[label]?.[k];
    const near = alias !== undefined && alias in t ? alias : nearest(k, keys(t));
    const topic = TOPIC_OF[label.split('.')[0]];
    const shown = k.length > 60 ? k.slice(0, 60) + '…' : k;
    return new ScryError(`${label} has no property '${shown}'` + (near ? `; did you mean ${label}.${near}?` : '') +
      (topic ? ` (help('${topic}') lists them)` : ''));
  }
  function guard(label, target) {
    return new Proxy(target, {
      get(t, k, r) {
        if (typeof k === 'string' && !(k in t) && k !== 'toJSON' && k !== 'then') throw unknownProperty(label, t, k);
        return Reflect.get(t, k, r);
      },
      set(t, k, v, r) {
        if (typeof k === 'string' && !(k in t)) throw unknownProperty(label, t, k);
        return Reflect.set(t, k, v, r);
      },
    });
  }
  const globalNames = N.global_names();
  // An unknown global is often a state member written bare (`regs`, `pc`): suggest those too.
  // gdb's commands typed as JavaScript names: the call that does it here.
  const GDB_WORDS = {
    __proto__: null,
    bt: 'state.unwind()', backtrace: 'state.unwind()', where: 'state.unwind()',
    c: 'cont()', run: 'cont()', r: 'cont()', start: 'cont()',
    s: 'next({into: true}) (a line, into calls) or step() (one instruction)',
    n: 'next()', si: 'step()', stepi: 'step()', ni: 'step()', nexti: 'step()', fin: 'finish()',
    p: "state.value('x') or state.var('x')", info: 'state.locals(), state.registers or thread.list()',
    b: "breakpoint.set('fn')", br: "breakpoint.set('fn')", tbreak: "breakpoint.set('fn')",
    d: 'breakpoint.remove(id)', watch: "watchpoint.set('x')", x: 'state.memory(addr)',
    disas: 'state.disasm()', disassemble: 'state.disasm()',
    frame: 'state.frame(n)', f: 'state.frame(n)', up: 'state.frame(n)', down: 'state.frame(n)',
    q: ':quit', quit: ':quit',
  };
  define('__gdbWord', (name) => GDB_WORDS[name] ?? (name === 'print' ? "print(state.value('x'))" : name === 'list' ? 'state.source()' : name === 'delete' ? 'breakpoint.remove(id)' : name === 'break' ? "breakpoint.set('fn')" : null));
  define('__suggestGlobal', (name) => {
    if (GDB_WORDS[name] !== undefined) return GDB_WORDS[name];
    const global = nearest(name, globalNames.concat(Object.keys(g)));
    if (global) return global;
    const member = nearest(name, Object.keys(stateTarget));
    return member ? 'state.' + member : null;
  });

  // ---- numbers ---------------------------------------------------------------------------
  function hex(v) {
    // A typed value is its number (a pointer its address).
    let n = v;
    if (n !== null && typeof n === 'object' && typeof n[Symbol.toPrimitive] === 'function') n = n[Symbol.toPrimitive]('number');
    if (typeof n === 'number' && Number.isNaN(n)) throw new TypeError(`hex(): ${String(v)} has no integer value`);
    if (typeof n === 'bigint') return n < 0n ? '-0x' + (-n).toString(16) : '0x' + n.toString(16);
    if (typeof n === 'number' && Number.isInteger(n)) return n < 0 ? '-0x' + (-n).toString(16) : '0x' + n.toString(16);
    throw new TypeError('hex() takes an integer Number or BigInt, got ' + (typeof n === 'string' ? `'${n}'` : String(n)));
  }

  // ---- built-in results --------------------------------------------------------------------
  // Every result scry hands out inherits from RESULT (objects) or LISTING (arrays): they
  // stringify to exactly the text they print (`'stop: ' + cont()`, `${state.instruction}`),
  // a listing also answers split() like its text, and the printer shows all their address
  // keys in hex (a script's own objects only the unmistakable ones).
  const BUILTIN = Symbol('scry.builtin');
  defineProperty(g, '__scryBuiltin', { __proto__: null, value: BUILTIN });
  const isArray = Array.isArray;
  function asText() {
    return N.text(this);
  }
  const RESULT = {};
  hidden(RESULT, 'toString', asText);
  defineProperty(RESULT, BUILTIN, { __proto__: null, value: true });
  const LISTING = Object.create(Array.prototype);
  hidden(LISTING, 'toString', asText);
  hidden(LISTING, 'split', function (sep, limit) {
    return N.text(this).split(sep, limit);
  });
  defineProperty(LISTING, BUILTIN, { __proto__: null, value: true });
  function result(v) {
    if (v !== null && typeof v === 'object') setPrototypeOf(v, isArray(v) ? LISTING : RESULT);
    return v;
  }
  // A listing and each of its rows.
  function resultRows(rows) {
    for (let i = 0; i < rows.length; i++) result(rows[i]);
    return result(rows);
  }
  // 64-bit values above 2^53 are BigInts, which JSON cannot hold: they become their hex text
  // (BigInt(s) reads it back), so JSON.stringify of any result works.
  hidden(BigInt.prototype, 'toJSON', function () {
    return hex(this.valueOf());
  });

