// The prelude, part values (see base.js): typed values.
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
  // A typed value as JavaScript's operators take it. Where a printer says what a wrapper
  // holds, `==` and `+` (the default hint) take that, as Number() does: `counter == 18` of a
  // std::atomic compared its text, "atomic(18)", and was silently false. A null smart pointer
  // is 0 (`p->next == 0` ends a walk down a list of unique_ptrs; it was false, and Number()
  // of it an error); any other keeps its text there (`l.name + '=' + l.value` of a locals
  // row), which is never 0, and its address as a number.
  function primitiveOf(h, hint, raw) {
    const p = hint === 'string' ? null : printedOf(h, raw);
    if (p && p.r.null === true) return 0;
    if (p && hint === 'default' && p.shape === 'value') {
      const x = p.held();
      return x !== null && typeof x === 'object' && x[HANDLE] !== undefined ? x[Symbol.toPrimitive]('default') : x;
    }
    return N.val_prim(h, hint, raw);
  }
  // A Rust enum that lends what it holds, as a wrapper does.
  const RUST_HOLDER = /^(core::(option|result)::)?(Option|Result)</;
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
    if (n === undefined) {
      const q = raw ? null : N.sequenceBase(h);
      if (q) {
        yield* q.iterate();
        return;
      }
      // A Rust Option or Result: the elements of what it holds, as `.length` and `[i]` read
      // them (`[...opt_v]` of a `Some(vec![1, 2, 3])`); None's error says it holds none.
      if (!raw && RUST_HOLDER.test(N.val_type(h))) {
        yield* elementsOf(N.val_deref(h), raw);
        return;
      }
      throw new ScryError(`${N.val_type(h)} is not iterable (it has no elements)`);
    }
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
    // Bytes. A container a printer reads is asked for its count far more often than its
    // bytes, and `v.size` of a vector of 3 read as 24 elements: there it is an error
    // naming both (`.$size` is its bytes).
    size: (h) => {
      if (!raw) {
        const p = printedOf(h, raw);
        let n;
        if (p && !p.holds()) {
          const inner = heldSequence(p);
          n = inner !== undefined ? inner.length : p.length();
        } else if (!p && !N.val_type(h).endsWith(']')) {
          // A Rust Vec, String, &str or slice, read without a printer (an array's
          // `.size`, C's `int [4]` or Rust's `[u8; 4]`, is its bytes, as sizeof).
          n = N.val_len(h);
        }
        if (n !== undefined) {
          // A map may have an entry keyed 'size': JavaScript reads m['size'] as m.size.
          const key = p && p.keyed() ? "; an entry keyed 'size' is .get('size')" : '';
          throw new ScryError(`${(p && p.summary) || N.val_type(h)}: .length is its count (${n}); .size would be its ${N.val_size(h)} bytes, which .$size gives${key}`);
        }
      }
      return N.val_size(h);
    },
    value: (h) => named(h, () => N.val_plain(h, raw)),
    length: (h) => {
      const p = printedOf(h, raw);
      if (!p) {
        const n = N.val_len(h);
        if (n !== undefined || raw) return n;
        const q = N.sequenceBase(h);
        if (q) return q.length();
        // A Rust Option's length is what Some holds (`Some(vec![1, 2])` has 2), as a
        // wrapper's is (a Result's what Ok or Err holds); None has none.
        if (RUST_HOLDER.test(N.val_type(h))) {
          let held;
          try {
            held = N.val_deref(h);
          } catch (_) {
            return undefined;
          }
          return wrap(held, raw).$length;
        }
        return undefined;
      }
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
        const q = raw ? null : N.sequenceBase(h);
        if (q) return q.keyed() ? q.get(i) : q.at(i);
        throw e;
      }
    },
    get: (h) => (key) => {
      const p = printedOf(h, raw) ?? (raw ? null : N.sequenceBase(h));
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
    // A 64-bit value past 2^53 (a BigInt, which JSON cannot hold) is its hex text, as a
    // bare BigInt is (see base.js): JSON.stringify(state.locals()) never throws on one.
    toJSON: (h) => () => {
      const v = N.val_plain(h, raw, true);
      return typeof v === 'bigint' ? hex(v) : v;
    },
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
        if (k === Symbol.toPrimitive) return (hint) => named(h, () => primitiveOf(h, hint, raw));
        if (k === Symbol.iterator) return () => elementsOf(h, raw);
        if (typeof k === 'symbol') return undefined;
        if (INDEX.test(k)) return HELPERS.at(h)(Number(k));
        if (k === '$size') return N.val_size(h);
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
          // `tags['red']` of a map: its entry by key, as the path `tags['red']` reads it.
          if (p && p.keyed()) {
            try {
              return p.get(k);
            } catch (_) {
              throw new ScryError(`${p.summary || N.val_type(h)} has no member or key ${JSON.stringify(k)} (its keys: .keys())`);
            }
          }
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
    for (let i = 0; i < rows.length; i++) {
      const h = own(rows[i], 'value');
      // Named, so `l.name + '=' + l.value` over an optimized-out one says which it was.
      if (h !== null && typeof h === 'object' && typeof rows[i].name === 'string') nameAs(h, rows[i].name);
      field(rows[i], 'value', typed(h));
    }
    return rows;
  }

