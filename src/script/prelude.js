// The public JS API of scry, built once per session on the native object N.
// Frames from this file are hidden from users' stack traces.
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
  function unknownProperty(label, t, k) {
    const near = nearest(k, keys(t));
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
  define('__suggestGlobal', (name) => {
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

  // ---- rendering helpers -----------------------------------------------------------------
  function asStop(rec) {
    hidden(rec, LINE, own(rec, 'line'));
    delete rec.line;
    // The line number alone, as an event's `e.line`: `next().line` is a number to compare.
    const src = own(rec, 'source');
    const m = src ? /:(\d+)$/.exec(src) : null;
    if (m) hidden(rec, 'line', Number(m[1]));
    // One instruction object everywhere: a watchpoint stop's culprit too.
    const at = own(rec, 'insn_addr');
    if (at !== undefined) field(rec, 'insn', insnAt(at, own(rec, 'insn')));
    // finish() of a function returning an aggregate: the value, typed.
    const ret = own(rec, 'returned');
    if (ret !== null && typeof ret === 'object') field(rec, 'returned', typed(ret));
    return result(rec);
  }
  // The instruction at `addr` as an object like state.instruction; `text` if it cannot be
  // decoded now.
  function insnAt(addr, text) {
    try {
      return asInsn(N.insn(addr));
    } catch (e) {
      return text;
    }
  }
  function asInsn(rec) {
    const sym = own(rec, 'symbol');
    const where = sym ? ` <${sym}>` : '';
    hidden(rec, LINE, `${hex(own(rec, 'addr'))}${where}\t${own(rec, 'text')}`);
    return result(rec);
  }
  function asListing(res) {
    const rows = own(res, 'rows');
    for (let i = 0; i < rows.length; i++) hidden(result(rows[i]), LINE, `${hex(rows[i].addr)}\t${rows[i].text}`);
    hidden(rows, LINE, own(res, 'text'));
    return result(rows);
  }

  // ---- memory ----------------------------------------------------------------------------
  const TYPES = ['u8', 'u16', 'u32', 'u64', 'i8', 'i16', 'i32', 'i64', 'f32', 'f64'];
  class Memory {
    constructor(addr) {
      field(this, 'addr', addr);
    }
    bytes(n) {
      return N.mem_bytes(this.addr, n);
    }
    array(type, n) {
      if (!TYPES.includes(type)) throw new ScryError(`memory(a).array(type, n): type is one of ${TYPES.join(' ')}, got ${String(type)}`);
      return N.mem_array(this.addr, type, n);
    }
    u8array(n) {
      return N.mem_u8array(this.addr, n);
    }
    str(max = 4096) {
      return N.mem_str(this.addr, max);
    }
    write_bytes(hexString) {
      N.mem_write_bytes(this.addr, String(hexString));
    }
  }
  class PrevMemory {
    constructor(addr) {
      field(this, 'addr', addr);
    }
  }
  for (const t of TYPES) {
    hidden(Memory.prototype, t, function () {
      return N.mem_read(this.addr, t);
    });
    hidden(Memory.prototype, 'write_' + t, function (v) {
      N.mem_write(this.addr, t, v);
    });
    hidden(PrevMemory.prototype, t, function () {
      return N.prev_mem(this.addr, t);
    });
  }
  // u64()/i64() are Numbers while exact (so `x + 1` works); these are BigInts always (so
  // `x & ~7n` works whatever the value).
  for (const [name, t] of [['u64n', 'u64'], ['i64n', 'i64']]) {
    hidden(Memory.prototype, name, function () {
      return BigInt(N.mem_read(this.addr, t));
    });
    hidden(PrevMemory.prototype, name, function () {
      return BigInt(N.prev_mem(this.addr, t));
    });
  }

  // ---- registers and flags ---------------------------------------------------------------
  const REGS = N.reg_names();
  const FLAGS = ['c', 'p', 'a', 'z', 's', 't', 'i', 'd', 'o'];
  // The registers an unwound frame can know, DWARF's x86-64 general registers.
  const FRAME_REGS = ['rax', 'rdx', 'rcx', 'rbx', 'rsi', 'rdi', 'rbp', 'rsp', 'r8', 'r9', 'r10', 'r11', 'r12', 'r13', 'r14', 'r15', 'rip'];
  function registers(prev) {
    const o = {};
    for (const r of REGS) {
      Object.defineProperty(o, r, {
        enumerable: true,
        get: prev ? () => N.prev_reg(r) : () => N.reg(r),
        set: prev
          ? () => {
              throw new ScryError('prev is read-only');
            }
          : (v) => N.set_reg(r, v),
      });
    }
    if (!prev) vectorRegisters(o);
    hidden(o, LINE, prev ? () => REGS.map((r) => `${r}\t${fmt(N.prev_reg(r))}`).join('\n') : () => N.regs_text());
    return guard(prev ? 'prev.registers' : 'state.registers', result(o));
  }
  // Floating-point and vector registers: readable and assignable by name, but not listed
  // with the general registers (state.fpu lists them).
  const VREGS = N.vreg_names();
  const LANE_VIEWS = ['f64', 'f32', 'u64', 'u32'];
  function vectorRegisters(o) {
    for (const r of VREGS) {
      defineProperty(o, r, { __proto__: null, enumerable: false, configurable: true, get: () => vector(r), set: (v) => N.set_vreg(r, v) });
    }
    return o;
  }
  // xmm/ymm: {hex, f64, f32, u64, u32}, a snapshot whose lanes write through when assigned;
  // st0-7 and mxcsr: Numbers.
  function vector(name) {
    const v = N.vreg(name);
    if (typeof v !== 'object' || v === null) return v;
    for (const view of LANE_VIEWS) {
      const lanes = own(v, view);
      for (let i = 0; i < lanes.length; i++) {
        let current = lanes[i];
        defineProperty(lanes, i, {
          __proto__: null,
          enumerable: true,
          configurable: true,
          get: () => current,
          set: (x) => {
            N.set_vlane(name, view, i, x);
            current = own(N.vreg(name), view)[i];
          },
        });
      }
      // A lane past the end is no lane: the array does not grow (strict code gets a TypeError).
      Object.preventExtensions(lanes);
    }
    hidden(v, LINE, own(v, 'line'));
    delete v.line;
    return v;
  }
  const fmt = (v) => (v === undefined ? 'undefined' : hex(v));
  function flags(prev) {
    const o = {};
    for (const f of FLAGS.concat(['n', 'v'])) {
      Object.defineProperty(o, f, {
        enumerable: FLAGS.includes(f),
        get: () => N.flag(f, prev),
        set: prev
          ? () => {
              throw new ScryError('prev is read-only');
            }
          : (v) => N.set_flag(f, !!v),
      });
    }
    hidden(o, LINE, () => FLAGS.map((f) => {
      const v = N.flag(f, prev);
      return `${f}=${v === undefined ? '?' : v ? 1 : 0}`;
    }).join(' '));
    return guard(prev ? 'prev.flags' : 'state.flags', result(o));
  }

  // The deepest walk state.unwind() and state.frame() make (the native limit).
  const MAX_FRAMES = 100000;

  // ---- typed values ----------------------------------------------------------------------
  // A typed value is a native handle (type + where its bytes are) behind a Proxy: members,
  // elements and pointees read like plain JS; every read is one native call, so the one
  // place that knows DWARF types is native code. Program names win over the helpers below
  // (a struct member called `size` is the member; `$size` is always the helper).
  // A value whose type a printer claims (printers.js) reads through it: `v[2]`, `v.length`,
  // `m.get('nuts')`, `for (const x of v)`, `sp.x` (members of what a smart pointer or wrapper
  // holds); `$raw` is the same value without printers, as gdb's `/r`.
  const HANDLE = Symbol('scry.handle');
  // The base-class part of handle `h` whose type name starts with `prefix`, searched
  // depth-first; undefined for none. `$base` and the printers find bases with it.
  function baseOf(h, prefix, depth = 0) {
    if (depth > 8) return undefined;
    for (const [name, b] of N.val_bases(h)) {
      if (name.startsWith(prefix)) return b;
      const inner = baseOf(b, prefix, depth + 1);
      if (inner !== undefined) return inner;
    }
    return undefined;
  }
  N.baseOf = baseOf;
  const printedOf = (h, raw) => (raw ? null : N.printedOf(h));
  // What a wrapper or smart pointer holds, when that has elements (a shared_ptr to a
  // vector): its length and elements are the wrapper's, as its members and indexes are.
  function heldSequence(p) {
    if (!p.holds()) return undefined;
    const x = p.held();
    if (x === null || typeof x !== 'object' || x[HANDLE] === undefined) return undefined;
    // Through wrappers of wrappers too (Arc<Mutex<Vec>>): the held value's own `$length`.
    return x.$length === undefined ? undefined : x;
  }
  // What a wrapper holds when it is a typed value (not an empty wrapper's, not a printer's
  // plain number).
  function heldOrNothing(p) {
    let x;
    try {
      x = p.held();
    } catch {
      return undefined;
    }
    return x !== null && typeof x === 'object' && x[HANDLE] !== undefined ? x : undefined;
  }
  function* elementsOf(h, raw) {
    const p = printedOf(h, raw);
    if (p) {
      const inner = heldSequence(p);
      if (inner !== undefined) {
        yield* inner;
        return;
      }
      yield* p.iterate();
      return;
    }
    const n = N.val_len(h);
    if (n === undefined) throw new ScryError(`${N.val_type(h)} is not iterable (it has no elements)`);
    for (let i = 0; i < n; i++) yield wrap(N.val_index(h, i), raw);
  }
  // What a value was asked for by (`state.var('argv')`, `state.value('r->port')`, and
  // members read from those): a value with none here names it in its error (`argv:
  // <optimized out>`), where the error alone named nothing.
  const NAMES = new WeakMap();
  const named = (h, read) => {
    try {
      return read();
    } catch (e) {
      const name = NAMES.get(h);
      if (name !== undefined && e && e.noValue === true && typeof e.message === 'string' && !e.message.startsWith(`${name}: `)) {
        try {
          e.message = `${name}: ${e.message}`;
        } catch (_) {
          // A frozen error keeps its words.
        }
      }
      throw e;
    }
  };
  const nameAs = (h, name) => {
    if (h !== null && typeof h === 'object') NAMES.set(h, name);
    return h;
  };
  const helpers = (raw) => ({
    __proto__: null,
    addr: (h) => N.val_addr(h),
    type: (h) => N.val_type(h),
    size: (h) => N.val_size(h),
    value: (h) => named(h, () => N.val_plain(h, raw)),
    length: (h) => {
      const p = printedOf(h, raw);
      if (!p) return N.val_len(h);
      const inner = heldSequence(p);
      return inner !== undefined ? inner.length : p.length();
    },
    kind: (h) => N.val_kind(h),
    deref: (h) => () => {
      const p = printedOf(h, raw);
      if (p && p.r.empty === true) throw new ScryError(`${p.summary || p.type} holds nothing to dereference`);
      return p && p.holds() ? p.held() : wrap(N.val_deref(h), raw);
    },
    ref: (h) => () => wrap(N.val_ref(h), raw),
    member: (h) => (name) => wrap(N.val_member(h, String(name)), raw),
    at: (h) => (i) => {
      const p = printedOf(h, raw);
      if (p) return p.at(i);
      try {
        return wrap(N.val_index(h, i), raw);
      } catch (e) {
        // A Rust tuple's field by position (`pair[1]` is `pair.__1`), asked for only when
        // indexing failed: an array's elements cost no extra call.
        if (N.val_keys(h).includes(`__${i}`)) return wrap(N.val_member(h, `__${i}`), raw);
        throw e;
      }
    },
    get: (h) => (key) => {
      const p = printedOf(h, raw);
      if (!p || !p.keyed()) throw new ScryError(`${N.val_type(h)} has no keys: get(key) is for maps (index a sequence with [i])`);
      return p.get(key);
    },
    entries: (h) => () => {
      const p = printedOf(h, raw);
      return p && p.keyed() ? [...p.iterate()] : [...elementsOf(h, raw)].map((x, i) => [i, x]);
    },
    // A map's keys (a std::map's, a HashMap's: what `get(key)` takes); else the members.
    keys: (h) => () => {
      const p = printedOf(h, raw);
      return p && p.keyed() ? [...p.iterate()].map(([k]) => k) : N.val_keys(h);
    },
    // The base-class part whose type name is or starts with `name` (how to read a member
    // two bases both have).
    base: (h) => (name) => {
      const b = baseOf(h, String(name));
      if (b !== undefined) return wrap(b, raw);
      const seen = N.val_bases(h).map(([n]) => n);
      throw new ScryError(`${N.val_type(h)} has no base ${String(name)}${seen.length ? `; its bases: ${seen.join(', ')}` : ''}`);
    },
    raw: (h) => wrap(h, true),
    text: (h) => () => N.val_text(h, raw),
    toString: (h) => () => N.val_text(h, raw),
    valueOf: (h) => () => N.val_prim(h, 'default', raw),
    // JSON is a rendering (of a listing with an optimized-out local too): a value with none
    // here is its `<optimized out>` text there, where `.value` is an error.
    toJSON: (h) => () => N.val_plain(h, raw, true),
  });
  // The helpers' names, for the printers' path steps (a path names members only).
  N.HELPER_NAMES = new Set(Object.keys(helpers(false)));
  const INDEX = /^(0|[1-9][0-9]*)$/;
  const makeHandler = (raw) => {
    const HELPERS = helpers(raw);
    return {
      __proto__: null,
      get(h, k) {
        if (k === LINE) return N.val_text(h, raw);
        if (k === HANDLE) return h;
        if (k === Symbol.toPrimitive) return (hint) => named(h, () => N.val_prim(h, hint, raw));
        if (k === Symbol.iterator) return () => elementsOf(h, raw);
        if (typeof k === 'symbol') return undefined;
        if (INDEX.test(k)) return HELPERS.at(h)(Number(k));
        if (k.startsWith('$') && hasOwn(HELPERS, k.slice(1))) return HELPERS[k.slice(1)](h);
        if (k === 'then') return undefined;
        const members = N.val_keys(h);
        const helper = hasOwn(HELPERS, k);
        // A member named like a helper is the member (the program's names are what a path
        // means), but not in a value a printer shows: a `Cell`'s or a `Ref`'s `value` is the
        // library's inner workings (`v.$raw.value`), and `.value` its plain data.
        if (members.includes(k) && !(helper && printedOf(h, raw))) {
          const m = N.val_member(h, k);
          const parent = NAMES.get(h);
          if (parent !== undefined) nameAs(m, `${parent}.${k}`);
          return wrap(m, raw);
        }
        // A smart pointer or wrapper lends the members of what it holds (`sp.x`, `rc.len`),
        // a member named like a helper too (`up.size` of a Box with a `size` is the member,
        // as `up->size` is; it was the unique_ptr's own 8 bytes).
        const p = printedOf(h, raw);
        if (helper) {
          const held = p && p.holds() && p.r.empty !== true ? heldOrNothing(p) : undefined;
          if (held !== undefined && N.val_keys(held[HANDLE]).includes(k) && !printedOf(held[HANDLE], raw)) return held[k];
          return HELPERS[k](h);
        }
        if (p && p.holds()) return p.held()[k];
        try {
          return wrap(N.val_member(h, k), raw);
        } catch (e) {
          // `k.startsWith(...)`, `hits.slice(2, 5)`: a JavaScript method asked of a typed
          // value; the plain data has it.
          if (k in String.prototype || k in Array.prototype) {
            throw new ScryError(`${e.message}; '${k}' is a JavaScript method: use v.value (plain data: a string, an array) or [...v]`);
          }
          // `while (p) p = p.next` runs into the NULL at the end: a typed value is an object,
          // always true; its number is what C tests.
          if (e && typeof e.message === 'string' && e.message.endsWith(' is NULL')) {
            throw new ScryError(`${e.message} (reading .${k}); a typed pointer is an object, always true in JavaScript: test it as a number, while (+p) or p != 0`);
          }
          throw e;
        }
      },
      has(h, k) {
        if (typeof k === 'symbol') return k === LINE || k === Symbol.toPrimitive || k === Symbol.iterator;
        return N.val_keys(h).includes(k) || hasOwn(HELPERS, k) || k.startsWith('$');
      },
      ownKeys(h) {
        return N.val_keys(h);
      },
      getOwnPropertyDescriptor(h, k) {
        if (typeof k !== 'string' || !N.val_keys(h).includes(k)) return undefined;
        return { __proto__: null, value: wrap(N.val_member(h, k), raw), enumerable: true, configurable: true, writable: false };
      },
      set(h, k) {
        throw new ScryError(`cannot assign '${String(k)}' of ${N.val_type(h)}: typed values are read-only (write with state.memory(v.$addr).write_...())`);
      },
      defineProperty(h, k) {
        throw new ScryError(`cannot define '${String(k)}' on a typed value`);
      },
      deleteProperty(h, k) {
        throw new ScryError(`cannot delete '${String(k)}' of a typed value`);
      },
      getPrototypeOf() {
        return null;
      },
      setPrototypeOf() {
        throw new ScryError('cannot change the prototype of a typed value');
      },
    };
  };
  const valueHandler = makeHandler(false);
  const rawHandler = makeHandler(true);
  function typed(h) {
    return h === undefined || h === null ? h : new Proxy(h, valueHandler);
  }
  function wrap(h, raw) {
    return h === undefined || h === null ? h : new Proxy(h, raw ? rawHandler : valueHandler);
  }
  function localsOf(frame) {
    const rows = N.frame_vars(frame);
    for (let i = 0; i < rows.length; i++) field(rows[i], 'value', typed(own(rows[i], 'value')));
    return rows;
  }

  // ---- state and prev --------------------------------------------------------------------
  const stateTarget = {
    get pc() {
      return N.reg('rip');
    },
    get sp() {
      return N.reg('rsp');
    },
    get tid() {
      return N.tid();
    },
    registers: registers(false),
    flags: flags(false),
    get instruction() {
      return asInsn(N.insn());
    },
    memory(addr) {
      if (addr === undefined) throw new ScryError('state.memory(addr) needs an address (Number, BigInt or symbol)');
      // A typed value is its address now (a pointer's value, an array's start).
      return new Memory(addr !== null && typeof addr === 'object' ? N.resolve(addr) : addr);
    },
    // disasm(n, addr); disasm('name') or disasm({function: true, at}): a whole function.
    disasm(n, addr) {
      if (typeof n === 'string') return asListing(N.disasm_function(n));
      if (n !== null && typeof n === 'object' && typeof n[Symbol.toPrimitive] !== 'function') {
        if (own(n, 'function') !== true) throw new ScryError("state.disasm(n, addr), state.disasm('function') or state.disasm({function: true, at})");
        return asListing(N.disasm_function(own(n, 'at')));
      }
      return asListing(N.disasm(addr, n));
    },
    symbol_at(addr) {
      return N.symbol_at(addr);
    },
    get fpu() {
      const o = vectorRegisters({});
      hidden(o, LINE, N.fpu_text());
      return guard('state.fpu', o);
    },
    get stack() {
      // The top of a mapped stack takes an unwind to know: made only when read.
      const b = N.stack();
      let top;
      const known = () => top ?? (top = N.stack_top());
      const o = {};
      defineProperty(o, 'top', { __proto__: null, enumerable: true, get: () => own(known(), 'top') });
      defineProperty(o, 'top_exact', { __proto__: null, enumerable: true, get: () => own(known(), 'exact') });
      for (const k of ['usable_base', 'guard_size', 'kind']) field(o, k, own(b, k));
      return result(o);
    },
    source(n) {
      return N.source(n);
    },
    locals(frame) {
      return resultRows(localsOf(frame));
    },
    var(name, frame) {
      if (typeof name !== 'string') throw new ScryError('state.var(name, frame=0) needs a variable name');
      return typed(nameAs(N.var(name, frame), name));
    },
    value(path, frame) {
      if (typeof path !== 'string') throw new ScryError("state.value(path, frame=0) needs a path such as 'r->target->port'");
      return typed(nameAs(N.path(path, frame), path));
    },
    typed(addr, type) {
      if (addr === undefined || typeof type !== 'string') throw new ScryError("state.typed(addr, type) needs an address and a type such as 'struct foo' or 'PyObject *'");
      return typed(N.typed_at(addr, type));
    },
    unwind(max, opts) {
      if (typeof max === 'object' && max !== null) {
        opts = max;
        max = max.max;
      }
      const res = N.unwind(max, !!(opts && opts.all), true, true);
      for (let i = 0; i < res.rows.length; i++) {
        const r = res.rows[i];
        hidden(r, 'registers', r.registers);
        hidden(r, 'source', r.source);
        // A row prints (and joins) as its line of the listing, as a disassembly row does.
        hidden(r, LINE, r.row_line);
        delete r.row_line;
      }
      hidden(res.rows, LINE, res.text);
      return resultRows(res.rows);
    },
    frame(n = 0) {
      if (!Number.isInteger(n) || n < 0) throw new ScryError(`state.frame(n): n must be a frame number, got ${String(n)}`);
      const rows = N.unwind(Math.min(n + 1, MAX_FRAMES), true, false).rows;
      const f = rows[n];
      if (!f) throw new ScryError(`no frame ${n}: the stack has ${rows.length} frame${rows.length === 1 ? '' : 's'}, #0 to #${rows.length - 1} (state.unwind() lists them)`);
      // A frame is a record (its line is the listing's business).
      delete f.row_line;
      // Assigning a register writes where that frame keeps it (a saved slot, or the live
      // register), then reads the frame again.
      const known = f.registers;
      const regs = {};
      for (const r of FRAME_REGS) {
        if (!hasOwn(known, r)) continue;
        defineProperty(regs, r, {
          __proto__: null,
          enumerable: true,
          get: () => known[r],
          set: (v) => {
            N.set_frame_reg(n, r, v);
            const again = N.unwind(Math.min(n + 1, MAX_FRAMES), true, false).rows[n];
            field(known, r, again ? own(again.registers, r) : v);
          },
        });
      }
      // The registers a frame does not know read as undefined, and writing one says why.
      for (const r of FRAME_REGS) {
        if (!hasOwn(regs, r)) defineProperty(regs, r, { __proto__: null, enumerable: false, get: () => undefined, set: (v) => N.set_frame_reg(n, r, v) });
      }
      field(f, 'registers', guard(`state.frame(${n}).registers`, regs));
      return result(f);
    },
    thread_local(name) {
      const v = N.tls_typed(String(name));
      if (v !== undefined) return typed(v);
      const t = N.tls(String(name));
      const kind = { 1: 'u8', 2: 'u16', 4: 'u32', 8: 'u64' }[t.size];
      return kind ? N.mem_read(t.addr, kind) : N.mem_bytes(t.addr, t.size);
    },
    thread_local_addr(name) {
      return N.tls(String(name)).addr;
    },
  };
  hidden(stateTarget, LINE, () => {
    const i = asInsn(N.insn());
    return `pc\t${hex(N.reg('rip'))}${i.symbol ? '\t' + i.symbol : ''}\nsp\t${hex(N.reg('rsp'))}\ninsn\t${i.text}`;
  });
  const state = guard('state', result(stateTarget));

  const prevTarget = {
    get pc() {
      return N.prev_reg('rip');
    },
    get sp() {
      return N.prev_reg('rsp');
    },
    registers: registers(true),
    flags: flags(true),
    memory(addr) {
      return new PrevMemory(addr);
    },
  };
  hidden(prevTarget, LINE, () => `pc\t${fmt(N.prev_reg('rip'))}\nsp\t${fmt(N.prev_reg('rsp'))}`);
  const prev = guard('prev', result(prevTarget));

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
  define('tracepoint', guard('tracepoint', {
    // set(where, {collect, if, full}): where is a function (its first instruction), a
    // file:line or an address.
    set(where, opts) {
      if (where === undefined) throw new ScryError("tracepoint.set(where, {collect: ['rdi', {mem: 'rsi', len: 16}], if, full}) needs a location");
      if (opts !== undefined && (typeof opts !== 'object' || opts === null)) throw new TypeError("tracepoint.set(where, {collect, if, full}): options must be an object");
      const cond = opts === undefined ? undefined : own(opts, 'if');
      if (cond !== undefined && typeof cond !== 'function') throw new TypeError('tracepoint.set(where, {if}): if must be a function of the record, e.g. e => e.registers.rdi > 4096');
      const r = N.tp_set(where, opts === undefined ? undefined : own(opts, 'collect'), opts === undefined ? undefined : own(opts, 'full'));
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
      for (const r of rows) hidden(result(r), LINE, `${r.id}\t${r.mode}\t${r.mode === 'pending' ? r.where : r.symbol ?? hex(r.addr)}\thits ${r.hits}, delivered ${r.delivered}, lost ${r.lost}${r.why ? `\t(trap: ${r.why})` : ''}`);
      return result(rows);
    },
  }));
  define('stop', stop);

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
    if (typeof path !== 'string') throw new TypeError('spawn(path, ...args, {env, cwd, stdin}?): path must be a string');
    let opts;
    if (rest.length && typeof rest[rest.length - 1] === 'object' && rest[rest.length - 1] !== null) opts = rest.pop();
    const hadProcess = own(N.status(), 'pid') !== undefined;
    const rec = N.spawn(path, rest.map(String), opts);
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
