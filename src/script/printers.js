// `printers`: how values of a type print and read. A printer turns a typed value into a short
// summary and children (elements, entries, or the one value a pointer or wrapper holds); the
// renderer shows them wherever values print (locals, state.var, unwind arguments, members
// nested in structs, cores), and typed values read through them (`v[2]`, `v.length`,
// `m.get(k)`, `for (const x of v)`, `sp.x`). scry's own printers below cover libstdc++ (as
// g++ 12 lays it out) and the Rust standard library (as rustc 1.9x does); scripts add theirs
// with printers.add(match, fn), which win over scry's. Layouts were learnt from gdb's
// printers; every line is scry's. Called once with the native object.
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
    const v = N.val_prim(h, 'number', true);
    return typeof v === 'bigint' ? Number(v) : v;
  };
  const u64 = (addr) => {
    const v = N.val_read(addr, 'u64');
    return typeof v === 'bigint' ? Number(v) : v;
  };
  const at = (h, i) => N.val_index(h, i);
  const deref = (h) => N.val_deref(h);
  // The base-class part of `h` whose type name starts with `prefix`, searched depth-first.
  function base(h, prefix, depth = 0) {
    if (depth > 8) return undefined;
    for (const [name, b] of N.val_bases(h)) {
      if (name.startsWith(prefix)) return b;
      const inner = base(b, prefix, depth + 1);
      if (inner !== undefined) return inner;
    }
    return undefined;
  }
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
  const count = (n, what) => {
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
    if (typeof match === 'string') return name === match || (name.startsWith(match) && name[match.length] === '<');
    match.lastIndex = 0;
    return match.test(name);
  }
  function printerFor(name) {
    let p = claimed.get(name);
    if (p !== undefined) return p;
    p = own.find((x) => matches(x.match, name)) || builtin.find((x) => matches(x.match, name)) || null;
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
      let src = this.shape === 'map' ? r.entries : this.shape === 'list' ? r.elements : [];
      if (typeof src === 'function') src = src.call(r);
      yield* src;
    }
    at(i) {
      i = Number(i);
      if (!Number.isInteger(i) || i < 0) throw new ScryError(`${this.type}: an index must be an integer >= 0, got ${String(i)}`);
      if (this.shape === 'map') throw new ScryError(`${this.type} is a map: read an entry with get(key)`);
      if (typeof this.r.at === 'function') return this.r.at(i);
      let k = 0;
      for (const x of this.iterate()) if (k++ === i) return x;
      throw new ScryError(`index ${i} is out of bounds of ${this.summary || this.type} (${k} elements)`);
    }
    keyed() {
      return this.shape === 'map';
    }
    get(key) {
      if (typeof this.r.get === 'function') return this.r.get(key);
      const want = typeof key === 'object' && key !== null ? String(key) : key;
      for (const [k, v] of this.iterate()) if (sameKey(k, want)) return v;
      throw new ScryError(`${this.summary || this.type} has no key ${typeof key === 'string' ? JSON.stringify(key) : String(key)}`);
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
  function sameKey(k, want) {
    if (k === want) return true;
    const p = k !== null && typeof k === 'object' ? N.val_plain(k[HANDLE] ?? k) : k;
    if (p === want) return true;
    if (typeof want === 'number' || typeof want === 'bigint') return typeof p !== 'object' && Number(p) === Number(want);
    return typeof p !== 'object' && String(p) === String(want);
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

  // ---- what the renderer calls (fixed before any user code) ------------------------------
  const childOf = (x) => {
    if (x !== null && typeof x === 'object') {
      const h = x[HANDLE];
      if (h !== undefined) return h;
    }
    return typeof x === 'string' ? x : x === undefined ? 'undefined' : N.text(x);
  };
  const errorText = (e) => {
    if (e instanceof Invalid) return `invalid: ${e.message}`;
    if (e instanceof ScryError || (e && e.name === 'ScryError')) return `invalid: ${e.message}`;
    return `printer error: ${e && e.message !== undefined ? e.message : String(e)}`;
  };
  function print(h, want) {
    try {
      const p = printedOf(h);
      if (!p) return 'printer error: no printer claims this type';
      const items = [];
      let more;
      let truncated = false;
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
      const text = p.r.text === undefined ? undefined : String(p.r.text);
      return [p.summary, p.shape, items, more, truncated, text];
    } catch (e) {
      return errorText(e);
    }
  }
  // One step of a value path through a printer (`v[2]`, `m["nuts"]`, `sp->x`, `*opt`): the
  // handle it leads to, or undefined where the layout answers (no printer, or a member the
  // type itself has).
  function step(h, op, arg) {
    const p = N.printedOf(h);
    if (!p) return undefined;
    let x;
    if (op === 'member') {
      if (N.val_keys(h).includes(arg) || !p.holds()) return undefined;
      x = p.held()[arg];
    } else if (op === 'index') x = p.keyed() ? p.get(arg) : p.at(arg);
    else if (op === 'key') {
      if (!p.keyed()) throw new ScryError(`${p.summary || p.type} has no keys (index it with [i])`);
      x = p.get(arg);
    } else if (op === 'deref') {
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

  // ---- libstdc++ --------------------------------------------------------------------------
  const STD = (name) => new RegExp(`^std::(__cxx11::)?${name}<`);

  function stringOf(h, ptr, len) {
    const unit = N.val_param_size(h, 0);
    count(len, 'length');
    const [text, plain] = N.val_literal(num(ptr), len, unit, 200);
    return { summary: text, text: plain, length: len };
  }
  def(STD('basic_string'), (h) => stringOf(h, mem(h, '_M_dataplus', '_M_p'), num(mem(h, '_M_string_length'))));
  def(/^std::basic_string_view</, (h) => stringOf(h, mem(h, '_M_str'), num(mem(h, '_M_len'))));

  def(/^std::vector<bool,/, (h) => {
    const start = mem(h, '_M_impl', '_M_start');
    const finish = mem(h, '_M_impl', '_M_finish');
    const p0 = num(mem(start, '_M_p'));
    const off0 = num(mem(start, '_M_offset'));
    const p1 = num(mem(finish, '_M_p'));
    const off1 = num(mem(finish, '_M_offset'));
    if (p1 < p0) invalid(`finish ${p1} before start ${p0}`);
    const n = count((p1 - p0) * 8 + off1 - off0, 'length');
    const bit = (i) => {
      const k = off0 + i;
      const word = N.val_read(p0 + Math.floor(k / 64) * 8, 'u64');
      return (BigInt(word) >> BigInt(k % 64)) & 1n ? 'true' : 'false';
    };
    return { summary: `vector<bool>(${n})`, ...seq(n, bit) };
  });
  def(STD('vector'), (h) => {
    const impl = mem(h, '_M_impl');
    const start = mem(impl, '_M_start');
    const s = num(start);
    const f = num(mem(impl, '_M_finish'));
    const e = num(mem(impl, '_M_end_of_storage'));
    const size = N.val_param_size(h, 0);
    if (f < s || e < f) invalid(`start ${s}, finish ${f}, end of storage ${e}`);
    if (size === 0 || (f - s) % size !== 0) invalid(`span ${f - s} is not a multiple of ${size}`);
    const n = count((f - s) / size, 'length');
    const cap = (e - s) / size;
    return { summary: cap === n ? `vector(${n})` : `vector(${n}, capacity ${cap})`, ...seq(n, (i) => typed(at(start, i))) };
  });
  def(/^std::array</, (h) => {
    const elems = mem(h, '_M_elems');
    const n = N.val_len(elems) ?? 0;
    return { summary: `array(${n})`, ...seq(n, (i) => typed(at(elems, i))) };
  });
  def(STD('deque'), (h) => {
    const impl = mem(h, '_M_impl');
    const start = mem(impl, '_M_start');
    const finish = mem(impl, '_M_finish');
    const size = N.val_param_size(h, 0);
    const per = size < 512 ? Math.floor(512 / size) : 1;
    const sFirst = num(mem(start, '_M_first'));
    const sCur = num(mem(start, '_M_cur'));
    const sLast = num(mem(start, '_M_last'));
    const sNode = num(mem(start, '_M_node'));
    const fNode = num(mem(finish, '_M_node'));
    const fCur = num(mem(finish, '_M_cur'));
    const fFirst = num(mem(finish, '_M_first'));
    if (fNode < sNode || sCur < sFirst || fCur < fFirst) invalid('iterators out of order');
    const n = count(((fNode - sNode) / 8 - 1) * per + (sLast - sCur) / size + (fCur - fFirst) / size, 'length');
    const skip = (sCur - sFirst) / size;
    const item = (i) => {
      const k = skip + i;
      const buf = u64(sNode + Math.floor(k / per) * 8);
      return typed(N.val_param_at(h, 0, buf + (k % per) * size));
    };
    return { summary: `deque(${n})`, ...seq(n, item) };
  });
  def(STD('list'), (h) => {
    const head = mem(h, '_M_impl', '_M_node');
    const headAddr = N.val_addr(head);
    const n = count(num(mem(head, '_M_size')), 'size');
    return {
      summary: `list(${n})`,
      length: n,
      elements: function* () {
        const meet = walked();
        let node = u64(headAddr);
        for (let i = 0; i < n; i++) {
          if (node === headAddr || node === 0) invalid(`the list ends after ${i} of ${n} nodes`);
          meet(node);
          yield typed(N.val_param_at(h, 0, node + 16));
          node = u64(node);
        }
      },
    };
  });
  def(/^std::forward_list</, (h) => {
    const first = num(mem(h, '_M_impl', '_M_head', '_M_next'));
    return {
      summary: 'forward_list',
      elements: function* () {
        const meet = walked();
        for (let node = first, i = 0; node !== 0 && i < MAX_WALK; i++, node = u64(node)) {
          meet(node);
          yield typed(N.val_param_at(h, 0, node + 8));
        }
      },
    };
  });

  // The nodes of a red-black tree in order (std::map, set and their multi forms).
  function* treeNodes(tree) {
    const header = N.val_addr(mem(tree, '_M_impl', '_M_header'));
    const n = num(mem(tree, '_M_impl', '_M_node_count'));
    const meet = walked();
    let x = u64(header + 16); // leftmost
    for (let i = 0; i < n; i++) {
      if (x === header || x === 0) invalid(`tree ends after ${i} of ${n} nodes`);
      meet(x);
      yield x;
      // The in-order successor.
      let r = u64(x + 24);
      if (r !== 0) {
        x = r;
        for (let l = u64(x + 16), k = 0; l !== 0; l = u64(x + 16), k++) {
          if (k > 64) invalid('tree too deep (a cycle)');
          x = l;
        }
      } else {
        let y = u64(x + 8);
        for (let k = 0; x === u64(y + 24); k++) {
          if (k > 64) invalid('tree too deep (a cycle)');
          x = y;
          y = u64(y + 8);
        }
        if (u64(x + 24) !== y) x = y;
      }
    }
  }
  const treeValue = (tree, node) => N.val_param_at(tree, 1, node + 32);
  def(/^std::(__debug::)?(multi)?map</, (h, name) => {
    const tree = mem(h, '_M_t');
    const n = count(num(mem(tree, '_M_impl', '_M_node_count')), 'size');
    const kind = name.startsWith('std::multimap') ? 'multimap' : 'map';
    return {
      summary: `${kind}(${n})`,
      length: n,
      entries: function* () {
        for (const node of treeNodes(tree)) {
          const v = treeValue(tree, node);
          yield [typed(mem(v, 'first')), typed(mem(v, 'second'))];
        }
      },
    };
  });
  def(/^std::(__debug::)?(multi)?set</, (h, name) => {
    const tree = mem(h, '_M_t');
    const n = count(num(mem(tree, '_M_impl', '_M_node_count')), 'size');
    const kind = name.startsWith('std::multiset') ? 'multiset' : 'set';
    return {
      summary: `${kind}(${n})`,
      length: n,
      elements: function* () {
        for (const node of treeNodes(tree)) yield typed(treeValue(tree, node));
      },
    };
  });
  // Hash tables: a singly linked list of nodes from _M_before_begin; a node's value follows
  // its next pointer (values aligned to more than 8 bytes are not supported: SPEC.md).
  function* hashNodes(table, n) {
    const meet = walked();
    let node = num(mem(table, '_M_before_begin', '_M_nxt'));
    for (let i = 0; i < n; i++) {
      if (node === 0) invalid(`list ends after ${i} of ${n} elements`);
      meet(node);
      yield node;
      node = u64(node);
    }
  }
  def(/^std::(__debug::)?unordered_(multi)?(map|set)</, (h, name) => {
    const table = mem(h, '_M_h');
    const n = count(num(mem(table, '_M_element_count')), 'size');
    const kind = name.slice(5, name.indexOf('<'));
    const isMap = kind.endsWith('map');
    return {
      summary: `${kind}(${n})`,
      length: n,
      [isMap ? 'entries' : 'elements']: function* () {
        for (const node of hashNodes(table, n)) {
          const v = N.val_param_at(table, 1, node + 8);
          yield isMap ? [typed(mem(v, 'first')), typed(mem(v, 'second'))] : typed(v);
        }
      },
    };
  });
  function counted(h, kind) {
    const ptr = mem(h, '_M_ptr');
    const pi = num(mem(h, '_M_refcount', '_M_pi'));
    if (pi === 0) return num(ptr) === 0 ? { summary: `${kind}(null)` } : { summary: `${kind}(no count)`, pointee: () => typed(deref(ptr)) };
    const use = N.val_read(pi + 8, 'i32');
    const weak = N.val_read(pi + 12, 'i32') - (use > 0 ? 1 : 0);
    if (use <= 0) return { summary: `${kind}(expired, weak ${weak})` };
    if (num(ptr) === 0) return { summary: `${kind}(null, use ${use}, weak ${weak})` };
    return { summary: `${kind}(use ${use}, weak ${weak})`, pointee: () => typed(deref(ptr)) };
  }
  def(/^std::shared_ptr</, (h) => counted(h, 'shared_ptr'));
  def(/^std::weak_ptr</, (h) => counted(h, 'weak_ptr'));
  def(/^std::unique_ptr</, (h) => {
    const tuple = mem(h, '_M_t', '_M_t');
    const head = base(tuple, 'std::_Head_base<0,');
    if (head === undefined) invalid('no pointer in the tuple');
    const ptr = mem(head, '_M_head_impl');
    if (num(ptr) === 0) return { summary: 'unique_ptr(null)' };
    return { summary: 'unique_ptr', pointee: () => typed(deref(ptr)) };
  });
  def(/^std::optional</, (h) => {
    const payload = mem(h, '_M_payload');
    if (!N.val_prim(mem(payload, '_M_engaged'), 'number', true)) return { summary: 'nullopt' };
    return { summary: 'optional', value: () => typed(mem(payload, '_M_payload', '_M_value')) };
  });
  def(/^std::variant</, (h) => {
    const index = num(mem(h, '_M_index'));
    if (index === 255 || index === 65535) return { summary: 'variant(valueless)' };
    let u = mem(h, '_M_u');
    for (let i = 0; i < index; i++) u = mem(u, '_M_rest');
    const first = mem(u, '_M_first');
    const storage = mem(first, '_M_storage');
    // A type with a destructor is kept as raw bytes: read it as the alternative's type.
    const v = N.val_type(storage).startsWith('__gnu_cxx::__aligned_membuf') ? N.val_param_at(first, 0, N.val_addr(storage)) : storage;
    return { summary: `variant[${index}]`, value: () => typed(v) };
  });
  def(/^std::atomic</, (h) => {
    const keys = N.val_keys(h);
    const v = keys.includes('_M_i') ? mem(h, '_M_i') : (() => {
      try {
        return mem(h, '_M_i');
      } catch {
        try {
          return mem(h, '_M_base', '_M_i');
        } catch {
          return mem(h, '_M_b', '_M_p');
        }
      }
    })();
    return { summary: 'atomic', value: () => typed(v) };
  });
  def(/^std::function</, (h) => {
    if (num(mem(h, '_M_manager')) === 0) return { summary: 'function(empty)' };
    const invoker = num(mem(h, '_M_invoker'));
    let sym;
    try {
      sym = N.symbol_at(invoker);
    } catch {
      // Inside a value being printed the session is only read: the address says it.
    }
    return { summary: `function -> ${sym || '0x' + invoker.toString(16)}` };
  });

  // ---- the Rust standard library --------------------------------------------------------
  // Names are matched with their modules (`std::collections::hash::map::HashMap<...>`), so
  // a program's own `HashMap` keeps its layout.
  const RS = (path) => new RegExp(`^${path}<`);
  // A number through single-field wrappers (a `Cell<usize>` is `{value: {value: 2}}`).
  const inner = (h, ...names) => num(mem(h, ...names));
  // The bytes of a `Vec<u8>` as text.
  function bytesText(vec) {
    const n = count(N.val_len(vec) ?? 0, 'length');
    if (n === 0) return { summary: '""', text: '', length: 0 };
    const [text, plain] = N.val_literal(N.val_addr(at(vec, 0)), n, 1, 200);
    return { summary: text, text: plain, length: n };
  }
  // hashbrown's table: buckets lie below the control bytes, bucket i at ctrl - (i+1) * size;
  // a control byte with its top bit clear marks a full bucket.
  function* buckets(raw) {
    const table = mem(raw, 'table');
    const mask = inner(table, 'bucket_mask');
    const items = count(inner(table, 'items'), 'items');
    const ctrl = inner(table, 'ctrl', 'pointer');
    if (items === 0) return;
    if ((mask + 1) & mask || items > mask + 1) invalid(`${items} items in ${mask + 1} buckets`);
    const size = N.val_param_size(raw, 0);
    let found = 0;
    for (let start = 0; found < items && start <= mask; start += 4096) {
      const len = Math.min(4096, mask + 1 - start);
      const bytes = N.val_bytes(ctrl + start, len);
      for (let i = 0; i < len && found < items; i++) {
        if (bytes[i] & 0x80) continue;
        found++;
        yield N.val_param_at(raw, 0, ctrl - (start + i + 1) * size);
      }
    }
    if (found < items) invalid(`${found} of ${items} items found`);
  }
  def(RS('std::collections::hash::map::HashMap'), (h) => {
    const raw = mem(h, 'base', 'table');
    const n = count(inner(raw, 'table', 'items'), 'items');
    return {
      summary: `HashMap(${n})`,
      length: n,
      entries: function* () {
        for (const t of buckets(raw)) yield [typed(mem(t, '__0')), typed(mem(t, '__1'))];
      },
    };
  });
  def(RS('std::collections::hash::set::HashSet'), (h) => {
    const raw = mem(h, 'base', 'map', 'table');
    const n = count(inner(raw, 'table', 'items'), 'items');
    return {
      summary: `HashSet(${n})`,
      length: n,
      elements: function* () {
        for (const t of buckets(raw)) yield typed(mem(t, '__0'));
      },
    };
  });
  // What a `MaybeUninit<T>` holds: through `ManuallyDrop` (and `MaybeDangling`, newer).
  function uninit(h) {
    let v = mem(h, 'value', 'value');
    if (N.val_type(v).startsWith('MaybeDangling<')) v = mem(v, '__0');
    return v;
  }
  // A B-tree's entries in order: a node holds `len` keys (and values); an internal node's
  // edges (pointers to its children) follow its leaf part.
  function* btree(map, withValues) {
    const length = count(inner(map, 'length'), 'length');
    if (length === 0) return;
    const root = mem(map, 'root', 'Some', '__0');
    const height = inner(root, 'height');
    if (height > 48) invalid(`height ${height}`);
    const first = deref(mem(root, 'node', 'pointer'));
    const leafSize = Math.ceil(N.val_size(first) / 8) * 8;
    let seen = 0;
    function* visit(leaf, h) {
      const len = inner(leaf, 'len');
      if (len > 11) invalid(`a node of ${len} keys`);
      const edges = N.val_addr(leaf) + leafSize;
      const keys = mem(leaf, 'keys');
      const vals = withValues ? mem(leaf, 'vals') : undefined;
      for (let i = 0; i <= len; i++) {
        if (h > 0) yield* visit(N.val_as(first, u64(edges + 8 * i)), h - 1);
        if (i === len) break;
        if (++seen > length) invalid(`more than ${length} entries`);
        const key = typed(uninit(at(keys, i)));
        yield withValues ? [key, typed(uninit(at(vals, i)))] : key;
      }
    }
    yield* visit(first, height);
  }
  def(RS('alloc::collections::btree::map::BTreeMap'), (h) => {
    const n = count(inner(h, 'length'), 'length');
    return { summary: `BTreeMap(${n})`, length: n, entries: () => btree(h, true) };
  });
  def(RS('alloc::collections::btree::set::BTreeSet'), (h) => {
    const map = mem(h, 'map');
    const n = count(inner(map, 'length'), 'length');
    return { summary: `BTreeSet(${n})`, length: n, elements: () => btree(map, false) };
  });
  def(RS('alloc::collections::vec_deque::VecDeque'), (h) => {
    const head = inner(h, 'head');
    const n = count(inner(h, 'len'), 'length');
    const raw = mem(h, 'buf', 'inner');
    const cap = inner(raw, 'cap', '__0');
    const ptr = inner(raw, 'ptr', 'pointer', 'pointer');
    if (n > cap || (n > 0 && head >= cap)) invalid(`${n} elements from ${head} in a buffer of ${cap}`);
    const size = N.val_param_size(h, 0);
    return { summary: `VecDeque(${n})`, ...seq(n, (i) => typed(N.val_param_at(h, 0, ptr + ((head + i) % cap) * size))) };
  });
  // Rc and Arc: the counts and the value share one allocation; a Weak of Weak::new() points
  // nowhere (usize::MAX). A strong reference holds an implicit weak one, not shown.
  function shared(h, kind, atomic) {
    const p = inner(h, 'ptr', 'pointer');
    if (p === 2 ** 64 - 1 || p === Number.MAX_SAFE_INTEGER) return { summary: `${kind}(dangling)` };
    const box = deref(mem(h, 'ptr', 'pointer'));
    const strong = atomic ? inner(box, 'strong', 'v', 'value') : inner(box, 'strong', 'value', 'value');
    const weak = (atomic ? inner(box, 'weak', 'v', 'value') : inner(box, 'weak', 'value', 'value')) - (strong > 0 ? 1 : 0);
    if (strong === 0) return { summary: `${kind}(dropped, weak ${weak})` };
    return { summary: `${kind}(strong ${strong}, weak ${weak})`, pointee: () => typed(mem(box, atomic ? 'data' : 'value')) };
  }
  def(RS('alloc::rc::Rc'), (h) => shared(h, 'Rc', false));
  def(RS('alloc::rc::Weak'), (h) => shared(h, 'Weak', false));
  def(RS('alloc::sync::Arc'), (h) => shared(h, 'Arc', true));
  def(RS('alloc::sync::Weak'), (h) => shared(h, 'Weak', true));
  def(RS('core::cell::Cell'), (h) => ({ summary: 'Cell', value: () => typed(mem(h, 'value', 'value')) }));
  def(RS('core::cell::RefCell'), (h) => {
    const b = inner(h, 'borrow', 'value', 'value');
    const state = b === 0 ? '' : b > 0 ? `[borrowed ${b}]` : '[borrowed mut]';
    return { summary: `RefCell${state}`, value: () => typed(mem(h, 'value', 'value')) };
  });
  const lockState = (h, locked) => {
    const poisoned = inner(h, 'poison', 'failed', 'v', 'value') !== 0;
    return [locked ? 'locked' : '', poisoned ? 'poisoned' : ''].filter(Boolean).join(', ');
  };
  def(/^std::sync::(poison::)?mutex::Mutex</, (h) => {
    const state = lockState(h, inner(h, 'inner', 'futex', 'v', 'value') !== 0);
    return { summary: state ? `Mutex[${state}]` : 'Mutex', value: () => typed(mem(h, 'data', 'value')) };
  });
  def(/^std::sync::(poison::)?rwlock::RwLock</, (h) => {
    const bits = inner(h, 'inner', 'state', 'v', 'value');
    // The futex RwLock counts readers in its low 30 bits; all ones is write-locked.
    const readers = bits & 0x3fffffff;
    const state = [readers === 0x3fffffff ? 'write-locked' : readers ? `read by ${readers}` : '', lockState(h, false)].filter(Boolean).join(', ');
    return { summary: state ? `RwLock[${state}]` : 'RwLock', value: () => typed(mem(h, 'data', 'value')) };
  });
  // A trait object (`Box<dyn Shape>`, `&dyn Shape`): a data pointer and a vtable, whose
  // DWARF variable (`<colls::Square as colls::Shape>::{vtable}`) names the concrete type.
  def(/(^|::)Box<dyn |^&(mut )?dyn /, (h, name) => {
    const keys = N.val_keys(h);
    if (!keys.includes('pointer') || !keys.includes('vtable')) return { summary: name };
    const data = inner(h, 'pointer');
    const vtable = inner(h, 'vtable');
    // `Box<colls::Square>`, `&colls::Square`, `&mut colls::Square`.
    const spell = name.startsWith('&') ? (t) => `${name.slice(0, name.indexOf('dyn '))}${t}` : (t) => `Box<${t}>`;
    const found = data === 0 ? undefined : N.val_dyn(h, vtable, data);
    if (found === undefined) return { summary: `${spell('dyn ?')} 0x${data.toString(16)}` };
    const [concrete, value] = found;
    if (value === undefined) return { summary: `${spell(concrete)} 0x${data.toString(16)}` };
    return { summary: spell(concrete), pointee: () => typed(value) };
  });
  def(/^std::path::PathBuf$/, (h) => bytesText(mem(h, 'inner', 'inner', 'inner')));
  def(/^std::ffi::os_str::OsString$/, (h) => bytesText(mem(h, 'inner', 'inner')));
  def(RS('core::num::nonzero::NonZero'), (h) => {
    let v = mem(h, '__0');
    for (let i = 0; i < 4 && N.val_kind(v) === 'struct'; i++) v = mem(v, '__0');
    return { summary: 'NonZero', value: () => typed(v) };
  });
  def(/^core::ops::range::Range(Inclusive)?</, (h, name) => {
    const dots = name.startsWith('core::ops::range::RangeInclusive') ? '..=' : '..';
    return `${N.val_text(mem(h, 'start'))}${dots}${N.val_text(mem(h, 'end'))}`;
  });
})
