// scry's printers for the Rust standard library as rustc 1.9x lays it out: hash maps and
// sets (hashbrown), B-trees, VecDeque, Rc/Arc/Weak, cells, locks, trait objects, paths.
// Layouts were learnt from the toolchain's gdb printers; every line is scry's. Built on the
// registry of printers.js; called once with the native object.
(function (N) {
  'use strict';
  const { def, seq, mem, num, u64, at, deref, base, invalid, count, walked, typed, MAX_WALK } = N.printerKit;
  const ScryError = N.ScryError;
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
    const addr = N.val_addr(at(vec, 0));
    const byte = (i) => {
      if (i >= n) throw new ScryError(`index ${i} is out of bounds (${n} bytes)`);
      return typed(at(vec, i));
    };
    return { summary: N.val_literal(addr, n, 1, 200), text: () => N.val_chars(addr, n, 1), length: n, at: byte };
  }
  // hashbrown's table: buckets lie below the control bytes, bucket i at ctrl - (i+1) * size;
  // a control byte with its top bit clear marks a full bucket.
  function* buckets(raw) {
    const table = mem(raw, 'table');
    const mask = inner(table, 'bucket_mask');
    const items = count(inner(table, 'items'), 'items');
    const ctrl = inner(table, 'ctrl', 'pointer');
    if (items === 0) return;
    // Bucket counts are powers of two, at least the items, and (here) at most 2^32: a
    // corrupt mask must not make a scan of terabytes of control bytes.
    if ((mask + 1) & mask || items > mask + 1 || mask >= 2 ** 32) invalid(`${items} items in ${mask + 1} buckets`);
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
    return { summary: `BTreeMap(${n})`, length: n, ordered: true, entries: () => btree(h, true) };
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
  // Anchored: a `Vec<Box<dyn Shape>>` holds trait objects but is none.
  def(/^(alloc::boxed::)?Box<dyn |^&(mut )?dyn /, (h, name) => {
    const keys = N.val_keys(h);
    if (!keys.includes('pointer') || !keys.includes('vtable')) invalid(`${name} has no data pointer and vtable`);
    const data = inner(h, 'pointer');
    // `Box<colls::Square>`, `&colls::Square`, `&mut colls::Square`.
    const spell = name.startsWith('&') ? (t) => `${name.slice(0, name.indexOf('dyn '))}${t}` : (t) => `Box<${t}>`;
    let vtable;
    try {
      vtable = inner(h, 'vtable');
    } catch (e) {
      // -O2 may keep the data pointer and not the vtable: the pointer is still the answer.
      if (!(e && e.noValue === true)) throw e;
      const dyn = (/dyn [^,>]*/.exec(name) ?? ['dyn ?'])[0];
      return { summary: `${spell(dyn)} 0x${data.toString(16)} (vtable ${e.message})` };
    }
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
