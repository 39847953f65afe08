// `printers`: how values of a type print and read. A printer turns a typed value into a short
// summary and children (elements, entries, or the one value a pointer or wrapper holds); the
// renderer shows them wherever values print (locals, state.var, unwind arguments, members
// nested in structs, cores), and typed values read through them (`v[2]`, `v.length`,
// `m.get(k)`, `for (const x of v)`, `sp.x`). This file is the registry, what the renderer
// calls, the public API and the helpers printers read with; scry's own printers are in
// printers_libstdcxx.js and printers_rust.js; scripts add theirs with printers.add(match, fn),
// which win over scry's. Called once with the native object.
(function (N) {
  'use strict';
  const g = globalThis;
  const LINE = g.__scryLine;
  const HANDLE = N.HANDLE;
  const typed = N.typed;
  const ScryError = N.ScryError;
  const { defineProperty, freeze } = Object;
  const hasOwn = Object.hasOwn;
  const hidden = (obj, key, value) =>
    defineProperty(obj, key, { __proto__: null, value, enumerable: false, configurable: true, writable: true });

  // Children shown per value at most is the renderer's (it asks for `want`); a printer's own
  // walks are bounded too, so a corrupt list that loops or a size of 2^40 never hangs.
  const MAX_WALK = 1 << 20;
  // Bytes a container may span before its size is called invalid.
  const MAX_SPAN = 2 ** 36;

  // ---- reading raw values (handles, not proxies: the printers' own reads are cheap) ------
  const mem = (h, ...names) => {
    for (const n of names) h = N.val_member(h, n);
    return h;
  };
  // A pointer's address or an integer's value as a Number (BigInt beyond 2^53).
  const num = (h) => {
    // No number: the read's own error (optimized out ones marked `noValue`), or what the
    // value prints as (two numbers of a complex), never a NaN that arithmetic would carry on with.
    const v = N.val_prim(h, 'number', true, true);
    if (typeof v === 'number' && Number.isNaN(v)) throw new ScryError(N.val_text(h, true));
    return typeof v === 'bigint' ? Number(v) : v;
  };
  // `num`, but a value past 2^53 stays a BigInt (for `count`, which says it exactly).
  const numExact = (h) => {
    const v = N.val_prim(h, 'number', true, true);
    if (typeof v === 'number' && Number.isNaN(v)) throw new ScryError(N.val_text(h, true));
    return v;
  };
  const u64 = (addr) => {
    const v = N.val_read(addr, 'u64');
    return typeof v === 'bigint' ? Number(v) : v;
  };
  const at = (h, i) => N.val_index(h, i);
  const deref = (h) => N.val_deref(h);
  // The base-class part of `h` whose type name starts with `prefix` (the prelude's search).
  const base = (h, prefix) => N.baseOf(h, prefix);
  class Invalid extends Error {}
  const invalid = (why) => {
    throw new Invalid(why);
  };
  // Addresses of the nodes a walk has met: one met twice is a loop, never followed.
  const walked = () => {
    const seen = new Set();
    return (node) => {
      if (seen.has(node)) invalid(`node 0x${node.toString(16)} is reached twice (the links loop)`);
      seen.add(node);
    };
  };
  // A count as a Number; its value exactly in the error (a BigInt past 2^53 is said whole,
  // never as a rounded Number: `length 7130845458987561379`, not `...561000`).
  const count = (n, what) => {
    if (typeof n === 'bigint') {
      if (n < 0n || n > BigInt(MAX_SPAN)) invalid(`${what} ${n}`);
      n = Number(n);
    }
    if (!Number.isSafeInteger(n) || n < 0 || n > MAX_SPAN) invalid(`${what} ${n}`);
    return n;
  };

  // ---- the registry ----------------------------------------------------------------------
  // Scripts' printers first (the newest first), then scry's. A string matches a type name
  // exactly or up to its template arguments ('std::vector' matches 'std::vector<int, ...>');
  // a RegExp is tested on the whole qualified name.
  const own = [];
  const builtin = [];
  let nextId = 1;
  const claimed = new Map();
  function matches(match, name) {
    if (typeof match === 'string') return name === match || (name.startsWith(match) && name[match.length] === '<' && !nestedInTemplate(name));
    match.lastIndex = 0;
    return match.test(name);
  }
  // A type declared inside a template (`std::basic_string<char>::_Alloc_hider`) is not the
  // template: scry's printers and a name given as a string never claim it (a script's
  // RegExp says for itself).
  function nestedInTemplate(name) {
    let depth = 0;
    let args = false;
    for (let i = 0; i < name.length; i++) {
      const c = name[i];
      if (c === '<') {
        depth++;
        args = true;
      } else if (c === '>') depth--;
      else if (c === ':' && name[i + 1] === ':' && depth === 0 && args) return true;
    }
    return false;
  }
  function printerFor(name) {
    let p = claimed.get(name);
    if (p !== undefined) return p;
    const inner = nestedInTemplate(name);
    p = own.find((x) => matches(x.match, name)) || (inner ? undefined : builtin.find((x) => matches(x.match, name))) || null;
    if (claimed.size > 4096) claimed.clear();
    claimed.set(name, p);
    return p;
  }
  function changed() {
    claimed.clear();
    N.printers_changed();
  }

  // A printer's answer, normalized: what the renderer and typed values read.
  class Printed {
    constructor(name, v, r) {
      this.type = name;
      if (typeof r === 'string') r = { summary: r };
      if (r === null || typeof r !== 'object') throw new ScryError(`a printer must return a string or an object, got ${typeof r}`);
      this.r = r;
      this.summary = String(r.summary ?? '');
      this.shape = hasOwn(r, 'entries') ? 'map' : hasOwn(r, 'elements') ? 'list' : hasOwn(r, 'pointee') ? 'pointer' : hasOwn(r, 'value') ? 'value' : 'summary';
    }
    length() {
      const n = this.r.length;
      if (typeof n === 'function') return n();
      if (n !== undefined) return n;
      if (this.shape === 'list' || this.shape === 'map') {
        let k = 0;
        for (const _ of this.iterate()) if (++k > MAX_WALK) return undefined;
        return k;
      }
      return undefined;
    }
    *iterate() {
      const r = this.r;
      if (this.shape === 'pointer' || this.shape === 'value') {
        yield this.held();
        return;
      }
      if (this.shape === 'summary' && typeof r.at === 'function') {
        // Text with indexable characters (a std::string): its characters, in order.
        const n = this.length();
        for (let i = 0; i < n; i++) yield r.at(i);
        return;
      }
      let src = this.shape === 'map' ? r.entries : this.shape === 'list' ? r.elements : [];
      if (typeof src === 'function') src = src.call(r);
      yield* src;
    }
    at(i) {
      if (this.shape === 'map') throw new ScryError(`${this.summary || this.type} is a map: read an entry with get(key)`);
      i = Number(i);
      if (!Number.isInteger(i) || i < 0) throw new ScryError(`${this.type}: an index must be an integer >= 0, got ${String(i)}`);
      if (typeof this.r.at === 'function') return this.r.at(i);
      // A wrapper or smart pointer indexes what it holds (`opt_v[2]`, `arc[1]`), as it
      // lends that value's members.
      if (this.holds()) return this.held()[i];
      let k = 0;
      for (const x of this.iterate()) if (k++ === i) return x;
      throw new ScryError(`index ${i} is out of bounds of ${this.summary || this.type} (${k} elements)`);
    }
    keyed() {
      return this.shape === 'map';
    }
    get(key) {
      if (typeof this.r.get === 'function') return this.r.get(key);
      // A typed value as the key is its text; a plain object, the fields of a struct key.
      const want = typeof key === 'object' && key !== null && key[HANDLE] !== undefined ? String(key) : key;
      for (const [k, v] of this.iterate()) if (sameKey(k, want)) return v;
      let shown;
      try {
        shown = typeof key === 'string' ? JSON.stringify(key) : typeof key === 'object' && key !== null && key[HANDLE] === undefined ? JSON.stringify(key) : String(key);
      } catch {
        shown = String(key);
      }
      throw new ScryError(`${this.summary || this.type} has no key ${shown}`);
    }
    holds() {
      return this.shape === 'pointer' || this.shape === 'value';
    }
    held() {
      const r = this.r;
      const v = this.shape === 'pointer' ? r.pointee : r.value;
      const x = typeof v === 'function' ? v.call(r) : v;
      if (x === undefined || x === null) throw new ScryError(`${this.summary || this.type} holds nothing`);
      return x;
    }
  }
  // A struct key's plain data has every field `want` gives, each the same key
  // (`releases.get({major: 1, minor: 10})`).
  function sameFields(p, want) {
    if (p === null || typeof p !== 'object') return false;
    const fields = Object.keys(want);
    return fields.length > 0 && fields.every((f) => Object.prototype.hasOwnProperty.call(p, f) && sameKey(p[f], want[f]));
  }
  // Two numbers, each a Number or a BigInt, equal as mathematical values.
  function sameNumber(a, b) {
    if (typeof a === 'bigint' || typeof b === 'bigint') {
      const exact = (x) => (typeof x === 'bigint' ? x : typeof x === 'number' && Number.isInteger(x) ? BigInt(x) : undefined);
      const [x, y] = [exact(a), exact(b)];
      return x !== undefined && x === y;
    }
    return Number(a) === b;
  }
  function sameKey(k, want) {
    if (k === want) return true;
    const p = k !== null && typeof k === 'object' ? (k[HANDLE] !== undefined ? N.val_plain(k[HANDLE]) : k) : k;
    if (p === want) return true;
    if (want !== null && typeof want === 'object' && want[HANDLE] === undefined) return sameFields(p, want);
    // A Rust fieldless enum key's plain value is its variant's name (`S`): asked by the path
    // `dirs[Dir::S]` it is the enumerator's number, by `get('Dir::S')` its qualified name
    // (both said "no key", of a key the map holds). Its kind is asked last: a lookup
    // compares every key until it finds one.
    if (typeof p === 'string' && typeof want !== 'object' && k !== null && typeof k === 'object' && k[HANDLE] !== undefined && N.val_kind(k[HANDLE]) === 'enum') {
      if (typeof want === 'string') return want === p || want.endsWith('::' + p);
      if (typeof want === 'number' || typeof want === 'bigint') return sameNumber(N.val_prim(k[HANDLE], 'number', true), want);
    }
    // Exactly: a key past 2^53 (a BigInt) is never rounded through a double.
    if (typeof want === 'number' || typeof want === 'bigint') return typeof p !== 'object' && sameNumber(p, want);
    if (typeof p !== 'object' && String(p) === String(want)) return true;
    // A char key by its character (`cm.get('z')` of a map<char, int>): its plain value is
    // its code.
    if (typeof want === 'string' && want.length === 1 && typeof p === 'number' && k !== null && typeof k === 'object' && k[HANDLE] !== undefined && N.val_kind(k[HANDLE]) === 'char') {
      return p === want.codePointAt(0);
    }
    // An enum key by its enumerator's name (`names.get('Kind::Key')`, or `'Key'`): its
    // plain value is its number, its text the name.
    if (typeof want === 'string' && typeof p === 'number' && k !== null && typeof k === 'object' && k[HANDLE] !== undefined && N.val_kind(k[HANDLE]) === 'enum') {
      const text = N.val_text(k[HANDLE], false);
      return text === want || text.endsWith('::' + want);
    }
    return false;
  }

  // The printed form of the value behind handle `h`, or null when no printer claims it.
  function printedOf(h) {
    const found = N.val_printable(h);
    if (found === undefined) return null;
    const [name, obj] = found;
    const p = printerFor(name);
    if (!p) return null;
    return new Printed(name, obj, p.fn(p.builtin ? obj : typed(obj), name));
  }
  N.printedOf = (h) => {
    try {
      return printedOf(h);
    } catch (e) {
      if (e instanceof Invalid) throw new ScryError(`invalid: ${e.message}`);
      throw e;
    }
  };

  // A class no printer claims that derives from a container (`struct Path :
  // std::vector<std::string>`, `std::smatch`, a private `vector` base): the printed form of
  // its first base part (depth-first) a printer reads as a sequence or a map, so that it
  // indexes, counts, iterates and looks keys up as that container does, as in C++. Null
  // for none.
  function sequenceBase(h, depth = 0) {
    if (depth > 3) return null;
    for (const [, b] of N.val_bases(h)) {
      const q = N.printedOf(b);
      if (q && (q.shape === 'list' || q.shape === 'map' || typeof q.r.at === 'function')) return q;
      if (!q) {
        const inner = sequenceBase(b, depth + 1);
        if (inner) return inner;
      }
    }
    return null;
  }
  N.sequenceBase = sequenceBase;

  // ---- what the renderer calls (fixed before any user code) ------------------------------
  const childOf = (x) => {
    if (x !== null && typeof x === 'object') {
      const h = x[HANDLE];
      if (h !== undefined) return h;
    }
    // Flags and numbers stay what they are (a vector<bool>'s bits print `true` and are
    // booleans as data); anything else is its text.
    if (typeof x === 'boolean' || typeof x === 'number') return x;
    return typeof x === 'string' ? x : x === undefined ? 'undefined' : N.text(x);
  };
  const errorText = (e) => {
    if (e instanceof Invalid) return `invalid: ${e.message}`;
    // A part of the value that has no value here (`<optimized out>`) says so as it is: the
    // container is not corrupt, the compiler kept that part nowhere.
    if (e && e.noValue === true) return e.message;
    // A nested value's own invalidity comes already said (`invalid: iterators out of order`).
    if (e instanceof ScryError || (e && e.name === 'ScryError')) return String(e.message).startsWith('invalid: ') ? e.message : `invalid: ${e.message}`;
    return `printer error: ${e && e.message !== undefined ? e.message : String(e)}`;
  };
  // The value as the renderer asks: at most `want` children; with `whole`, a text-like
  // value's characters too (its `text`, a function read only then: plain data).
  function print(h, want, whole) {
    try {
      const p = printedOf(h);
      if (!p) return 'printer error: no printer claims this type';
      const items = [];
      let more;
      let truncated = false;
      // Plain data of elements laid out one after another (a vector's storage) is read by
      // the renderer from the first one, without a call back here per element.
      const run = p.r[RUN];
      // Elements in no memory (a std::array kept in registers at -O2) are read one by one.
      if (whole && p.shape === 'list' && run !== undefined && N.val_addr(run[0]) !== undefined) return [p.summary, p.shape, [], undefined, false, undefined, run, false, false];
      if (p.shape !== 'summary') {
        for (const x of p.iterate()) {
          if (items.length >= Math.max(want, p.holds() ? 1 : 0)) {
            truncated = true;
            break;
          }
          if (p.shape === 'map') {
            if (!Array.isArray(x) || x.length < 2) throw new ScryError('a map printer\'s entries must be [key, value] pairs');
            items.push([childOf(x[0]), childOf(x[1])]);
          } else items.push([null, childOf(x)]);
        }
        if (truncated) {
          const n = p.r.length === undefined ? undefined : p.length();
          if (n !== undefined) {
            more = n - items.length;
            truncated = false;
          }
        }
      }
      const t = p.r.text;
      const text = !whole || t === undefined ? undefined : String(typeof t === 'function' ? t() : t);
      return [p.summary, p.shape, items, more, truncated, text, undefined, p.r.empty === true, p.r.ordered === true];
    } catch (e) {
      return errorText(e);
    }
  }
  // One step of a value path through a printer (`v[2]`, `m["nuts"]`, `sp->x`, `*opt`): the
  // handle it leads to, or undefined where the layout answers (no printer, or a member the
  // type itself has).
  function step(h, op, arg) {
    let p = N.printedOf(h);
    if (!p && (op === 'index' || op === 'key')) p = sequenceBase(h);
    if (!p) return undefined;
    let x;
    if (op === 'member') {
      if (N.val_keys(h).includes(arg) || !p.holds()) return undefined;
      const held = p.held();
      // A path names the program's members only: `ev->kind` is a member `kind` (or the
      // error naming the members there), never the `kind` helper of a typed value.
      x = N.HELPER_NAMES.has(arg) && held !== null && typeof held === 'object' ? held.$member(arg) : held[arg];
    } else if (op === 'index') x = p.keyed() ? p.get(arg) : p.at(arg);
    else if (op === 'key') {
      if (!p.keyed()) throw new ScryError(`${p.summary || p.type} has no keys (index it with [i])`);
      x = p.get(arg);
    } else if (op === 'deref') {
      // `*opt` of an empty optional (a null unique_ptr): what `$deref()` says, not "not a
      // pointer".
      if (p.r.empty === true) throw new ScryError(`${p.summary || p.type} holds nothing to dereference`);
      if (!p.holds()) return undefined;
      x = p.held();
    }
    const out = x !== null && typeof x === 'object' ? x[HANDLE] : undefined;
    if (out === undefined) throw new ScryError(`${p.summary || p.type}: the printer gave no typed value here`);
    return out;
  }
  defineProperty(g, '__scryPrinters', {
    __proto__: null,
    value: freeze({ __proto__: null, claims: (name) => printerFor(name) !== null, print, step }),
  });

  // ---- the public API --------------------------------------------------------------------
  const describe = (m) => (typeof m === 'string' ? m : String(m));
  const printers = {
    add(match, fn) {
      if (typeof match !== 'string' && !(match instanceof RegExp)) throw new ScryError('printers.add(match, fn): match is a type name or a RegExp over the qualified type name');
      if (typeof match === 'string' && match === '') throw new ScryError('printers.add(match, fn): the type name is empty');
      if (typeof fn !== 'function') throw new ScryError('printers.add(match, fn): fn(value) returns a string or {summary, elements | entries | pointee | value, length}');
      const id = nextId++;
      own.unshift({ id, match, fn, builtin: false });
      changed();
      return id;
    },
    remove(which) {
      const before = own.length;
      for (let i = own.length - 1; i >= 0; i--) {
        const p = own[i];
        const same = typeof which === 'number' ? p.id === which : describe(p.match) === describe(which);
        if (same) own.splice(i, 1);
      }
      if (own.length === before) throw new ScryError(`printers.remove(${typeof which === 'string' ? JSON.stringify(which) : String(which)}): no such printer of a script (printers.list() shows them)`);
      changed();
      return before - own.length;
    },
    list() {
      const rows = [...own.map((p) => ({ id: p.id, match: describe(p.match), from: 'script' })), ...builtin.map((p) => ({ match: describe(p.match), from: 'scry' }))];
      hidden(rows, LINE, rows.map((r) => `${r.id ?? '-'}\t${r.from}\t${r.match}`).join('\n'));
      return rows;
    },
  };
  hidden(printers, LINE, 'printers: add(match, fn), remove(id | match), list()');
  defineProperty(g, 'printers', { __proto__: null, value: freeze(printers), enumerable: false, configurable: false, writable: false });

  // Built-ins get the raw handle (`h`) and return typed proxies as children.
  const def = (match, fn) => builtin.push({ match, fn, builtin: true });
  // A container's elements, `n` of them from index 0, read by `item(i)`.
  // `n` elements one after another from where handle `first` points (or, an array, starts):
  // a sequence whose plain data the renderer reads itself.
  const RUN = Symbol('scry.run');
  const run = (first, n) => ({ ...seq(n, (i) => typed(at(first, i))), [RUN]: n > 0 ? [at(first, 0), n] : undefined });
  const seq = (n, item) => ({
    length: n,
    elements: function* () {
      for (let i = 0; i < n; i++) yield item(i);
    },
    at: (i) => {
      if (i >= n) throw new ScryError(`index ${i} is out of bounds (${n} elements)`);
      return item(i);
    },
  });

  // Where a node whose links take `header` bytes keeps a value of `h`'s template parameter
  // `i`: past the links, at the value's alignment (a 16-byte aligned value leaves a gap).
  const valueOffset = (h, i, header) => {
    const a = N.val_param_align(h, i);
    return Math.ceil(header / a) * a;
  };

  // The top-level arguments of the first template list after `marker` in a C++ name:
  // `templateArgs('std::_Function_handler<int (int), main::{lambda(int)#1}>::_M_invoke',
  // '_Function_handler<')` is ['int (int)', 'main::{lambda(int)#1}'].
  function templateArgs(name, marker) {
    const from = name.indexOf(marker);
    if (from < 0) return [];
    const args = [];
    let depth = 0;
    let start = from + marker.length;
    for (let i = start; i < name.length; i++) {
      const c = name[i];
      if (c === '<' || c === '(' || c === '{' || c === '[') depth++;
      else if (c === '>' && depth === 0) {
        args.push(name.slice(start, i).trim());
        return args;
      } else if (c === '>' || c === ')' || c === '}' || c === ']') depth--;
      else if (c === ',' && depth === 0) {
        args.push(name.slice(start, i).trim());
        start = i + 1;
      }
    }
    return [];
  }
  // The function at `addr` by name, without parameters or offset (`twice`); undefined when
  // no symbol is known there.
  function functionAt(addr) {
    const sym = N.symbol_peek(addr);
    if (typeof sym !== 'string') return undefined;
    let depth = 0;
    for (let i = 0; i < sym.length; i++) {
      const c = sym[i];
      if (c === '<' || c === '{') depth++;
      else if (c === '>' || c === '}') depth--;
      else if ((c === '(' || c === '+') && depth === 0 && i > 0) return sym.slice(0, i);
    }
    return sym;
  }

  // Text of `len` code units of `h`'s template parameter 0 at `addr` (a string, a view).
  function textOf(h, addr, len) {
    const unit = N.val_param_size(h, 0);
    len = count(len, 'length');
    const at = (i) => {
      if (i >= len) throw new ScryError(`index ${i} is out of bounds (${len} characters)`);
      return typed(N.val_param_at(h, 0, addr + i * unit));
    };
    // wchar_t text is `L"…"` (as the compiler spells it), char32_t's `U"…"`: both 4 bytes.
    const wide = unit === 4 && N.val_type(N.val_param_at(h, 0, addr)) === 'wchar_t';
    return { summary: N.val_literal(addr, len, unit, 200, wide), text: () => N.val_chars(addr, len, unit), length: len, at };
  }
  // Elements of `h`'s template parameter 0 from the pointer `first` up to address `end`,
  // storage up to `cap` (a vector, either library's).
  function contiguous(h, first, endH, capH, kind) {
    const s = num(first);
    const [end, cap] = [num(endH), num(capH)];
    const size = N.val_param_size(h, 0);
    // Said exactly, in hex: a corrupt pointer is past 2^53 (a Number rounds it).
    if (end < s || cap < end) invalid(`start ${hexOf(first)}, end ${hexOf(endH)}, end of storage ${hexOf(capH)}`);
    if (size === 0 || (end - s) % size !== 0) invalid(`span ${end - s} is not a multiple of ${size}`);
    if ((cap - s) % size !== 0) invalid(`storage span ${cap - s} is not a multiple of ${size}`);
    const n = count((end - s) / size, 'length');
    const c = (cap - s) / size;
    return { summary: c === n ? `${kind}(${n})` : `${kind}(${n}, capacity ${c})`, ...run(first, n) };
  }
  // A pointer's or integer's exact value in hex (a BigInt past 2^53, never a rounded Number).
  function hexOf(h) {
    const v = N.val_prim(h, 'number', true, true);
    return typeof v === 'bigint' || Number.isSafeInteger(v) ? `0x${v.toString(16)}` : String(v);
  }
  // A counted pointer (shared_ptr, weak_ptr) once its counts are read: `use` owners, `weak`
  // weak pointers, `ptr` the object's pointer handle.
  function counted(kind, use, weak, ptr) {
    if (use <= 0) return { summary: `${kind}(expired, weak ${weak})`, empty: true };
    let p;
    try {
      p = num(ptr);
    } catch {
      // The counts are in the heap; the pointer, at -O2, may be kept nowhere.
      return { summary: `${kind}(use ${use}, weak ${weak})`, pointee: '<optimized out>' };
    }
    if (p === 0) return { summary: `${kind}(null, use ${use}, weak ${weak})` };
    return { summary: `${kind}(use ${use}, weak ${weak})`, pointee: () => typed(deref(ptr)) };
  }

  // What the printer files (printers_libstdcxx.js, printers_libcxx.js, printers_rust.js) are
  // written with.
  // An iterator prints as what it refers to (`iterator -> 12`); a null one says so. (An end()
  // iterator refers to no element: what it shows is whatever lies there, as in gdb.)
  const iterator = (addr, element) => (addr === 0 ? { summary: 'iterator(null)', empty: true, null: true } : { summary: 'iterator', pointee: element });
  N.printerKit = freeze({ def, seq, run, mem, num, numExact, u64, at, deref, base, invalid, count, walked, typed, valueOffset, templateArgs, functionAt, textOf, contiguous, counted, iterator, MAX_WALK });
})
