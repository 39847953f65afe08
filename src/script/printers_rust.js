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
  // `n` bytes of text at `addr` (UTF-8 where it is), byte i the typed value `byte(i)`.
  function textAt(addr, n, byte, prefix = '') {
    const at = (i) => {
      if (i >= n) throw new ScryError(`index ${i} is out of bounds (${n} bytes)`);
      return typed(byte(i));
    };
    return { summary: `${prefix}${N.val_literal(addr, n, 1, 200)}`, text: () => N.val_chars(addr, n, 1), length: n, at };
  }
  // The bytes of a `Vec<u8>` as text.
  function bytesText(vec) {
    const n = count(N.val_len(vec) ?? 0, 'length');
    if (n === 0) return { summary: '""', text: '', length: 0 };
    return textAt(N.val_addr(at(vec, 0)), n, (i) => at(vec, i));
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
  // nowhere (usize::MAX). A strong reference holds an implicit weak one, not shown. One
  // that holds nothing (dangling, dropped) is empty: null as plain data. An `Rc<str>` or
  // `Arc<[T]>` is a fat pointer (`data_ptr`, `length`) to the counts and the elements;
  // an `Rc<dyn Trait>` (`pointer`, `vtable`) to the counts and a value of the concrete type.
  function shared(h, kind, atomic, name) {
    const ptr = mem(h, 'ptr', 'pointer');
    const keys = N.val_keys(ptr);
    const fat = keys.includes('data_ptr') ? 'slice' : keys.includes('vtable') ? 'dyn' : undefined;
    const p = fat === 'slice' ? inner(ptr, 'data_ptr') : fat === 'dyn' ? inner(ptr, 'pointer') : num(ptr);
    if (p === 2 ** 64 - 1 || p === Number.MAX_SAFE_INTEGER) return { summary: `${kind}(dangling)`, empty: true };
    const box = deref(fat === 'slice' ? mem(ptr, 'data_ptr') : fat === 'dyn' ? mem(ptr, 'pointer') : ptr);
    const strong = atomic ? inner(box, 'strong', 'v', 'value') : inner(box, 'strong', 'value', 'value');
    const weak = (atomic ? inner(box, 'weak', 'v', 'value') : inner(box, 'weak', 'value', 'value')) - (strong > 0 ? 1 : 0);
    const counts = strong === 0 ? `${kind}(dropped, weak ${weak})` : `${kind}(strong ${strong}, weak ${weak})`;
    if (strong === 0) return { summary: counts, empty: true };
    const field = atomic ? 'data' : 'value';
    if (fat === 'slice') {
      const n = count(inner(ptr, 'length'), 'length');
      // DWARF gives the unsized value the type of one element (`u8` for a `str`): element
      // i lies i elements further on.
      const first = mem(box, field);
      const addr = N.val_addr(first);
      const size = N.val_size(first);
      if (addr === undefined || !(size > 0)) invalid(`the elements of ${name} are in no memory`);
      if (/^[\w:]+<str[,>]/.test(name)) return textAt(addr, n, (i) => N.val_as(first, addr + i), `${counts} `);
      return { summary: `${counts} [${n}]`, ...seq(n, (i) => typed(N.val_as(first, addr + i * size))) };
    }
    if (fat === 'dyn') {
      // The value follows the two counts at the concrete type's alignment (the vtable's
      // third word).
      const vtable = inner(ptr, 'vtable');
      const align = u64(vtable + 16);
      if (!(align > 0) || align & (align - 1)) invalid(`alignment ${align} in the vtable`);
      const data = p + Math.ceil(16 / align) * align;
      const found = N.val_dyn(ptr, vtable, data);
      if (found === undefined || found[1] === undefined) return { summary: `${counts} dyn 0x${data.toString(16)}` };
      return { summary: `${counts} ${found[0]}`, pointee: () => typed(found[1]) };
    }
    return { summary: counts, pointee: () => typed(mem(box, field)) };
  }
  def(RS('alloc::rc::Rc'), (h, name) => shared(h, 'Rc', false, name));
  def(RS('alloc::rc::Weak'), (h, name) => shared(h, 'Weak', false, name));
  def(RS('alloc::sync::Arc'), (h, name) => shared(h, 'Arc', true, name));
  def(RS('alloc::sync::Weak'), (h, name) => shared(h, 'Weak', true, name));
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
  // With more bounds rustc parenthesizes it: `Box<(dyn ledger::Pricing + core::marker::Send)>`,
  // `&(dyn Shape + Sync)`.
  def(/^(alloc::boxed::)?Box<\(?dyn |^&(mut )?\(?dyn /, (h, name) => {
    const keys = N.val_keys(h);
    if (!keys.includes('pointer') || !keys.includes('vtable')) invalid(`${name} has no data pointer and vtable`);
    const data = inner(h, 'pointer');
    // `Box<colls::Square>`, `&colls::Square`, `&mut colls::Square`.
    const spell = name.startsWith('&') ? (t) => `${name.slice(0, name.indexOf('dyn ')).replace(/\($/, '')}${t}` : (t) => `Box<${t}>`;
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
    // A zero-sized value the DWARF types as more: `Box::new(double)` boxes the fn item (no
    // bytes, its data pointer the dangling 0x1), which rustc's vtable names as the fn pointer
    // type. The vtable's size slot is the truth; reading 8 bytes at 0x1 said the box was bad.
    if (u64(vtable + 8) === 0 && N.val_size(value) > 0) {
      const what = concrete.startsWith('fn(') ? 'a fn item' : 'zero-sized';
      return { summary: `${spell(concrete)} (${what}: no data)`, empty: true };
    }
    return { summary: spell(concrete), pointee: () => typed(value) };
  });
  def(/^std::path::PathBuf$/, (h) => bytesText(mem(h, 'inner', 'inner', 'inner')));
  def(/^std::ffi::os_str::OsString$/, (h) => bytesText(mem(h, 'inner', 'inner')));
  def(RS('core::num::nonzero::NonZero'), (h) => {
    let v = mem(h, '__0');
    for (let i = 0; i < 4 && N.val_kind(v) === 'struct'; i++) v = mem(v, '__0');
    return { summary: 'NonZero', value: () => typed(v) };
  });
  // Ranges as Rust's Debug writes them; an exhausted `RangeInclusive` (iterated to its end)
  // is empty though its bounds are equal, and says so.
  def(/^core::ops::range::Range(Inclusive|From|To|ToInclusive)?</, (h, name) => {
    const kind = /^core::ops::range::Range(\w*)</.exec(name)[1];
    const dots = kind.endsWith('Inclusive') ? '..=' : '..';
    const start = kind === 'To' || kind === 'ToInclusive' ? '' : N.val_text(mem(h, 'start'));
    const end = kind === 'From' ? '' : N.val_text(mem(h, 'end'));
    const exhausted = kind === 'Inclusive' && N.val_keys(h).includes('exhausted') && Boolean(num(mem(h, 'exhausted')));
    return `${start}${dots}${end}${exhausted ? ' (exhausted)' : ''}`;
  });
  // Borrows and guards hold what they lend: `Ref`, `RefMut` and a read guard a pointer to
  // it, a `MutexGuard` and a write guard the lock itself.
  for (const kind of ['Ref', 'RefMut']) {
    def(RS(`core::cell::${kind}`), (h) => ({ summary: kind, pointee: () => typed(deref(mem(h, 'value', 'pointer'))) }));
  }
  def(/^std::sync::(poison::)?rwlock::(RwLockReadGuard|MappedRwLockReadGuard)</, (h) => ({ summary: 'RwLockReadGuard', pointee: () => typed(deref(mem(h, 'data', 'pointer'))) }));
  def(/^std::sync::(poison::)?rwlock::RwLockWriteGuard</, (h) => ({ summary: 'RwLockWriteGuard', pointee: () => typed(mem(deref(mem(h, 'lock')), 'data', 'value')) }));
  def(/^std::sync::(poison::)?mutex::MutexGuard</, (h) => ({ summary: 'MutexGuard', pointee: () => typed(mem(deref(mem(h, 'lock')), 'data', 'value')) }));
  // Atomics hold their value in an UnsafeCell; an AtomicBool's byte is a flag.
  def(/^core::sync::atomic::Atomic(Bool|[IU](8|16|32|64|128|size)|Ptr<.*>)$/, (h, name) => {
    const kind = name.slice('core::sync::atomic::'.length).replace(/<.*/, '');
    const v = mem(h, 'v', 'value');
    if (kind === 'AtomicBool') return { summary: kind, value: () => num(v) !== 0 };
    return { summary: kind, value: () => typed(v) };
  });
  // A BinaryHeap is its Vec, in heap order (the greatest first), as gdb shows the Vec.
  def(RS('alloc::collections::binary_heap::BinaryHeap'), (h) => {
    const data = mem(h, 'data');
    const n = count(N.val_len(data) ?? 0, 'length');
    return { summary: `BinaryHeap(${n})`, ...seq(n, (i) => typed(at(data, i))) };
  });
  // A LinkedList: `len` nodes from `head`, each `{next, prev, element}` (fields in rustc's
  // order), `next` an Option<NonNull<Node>>.
  def(RS('alloc::collections::linked_list::LinkedList'), (h) => {
    const n = count(inner(h, 'len'), 'length');
    const link = (opt) => {
      try {
        return mem(opt, '__0', 'pointer');
      } catch {
        return undefined;
      }
    };
    return {
      summary: `LinkedList(${n})`,
      length: n,
      elements: function* () {
        const seen = walked();
        let p = link(mem(h, 'head'));
        for (let i = 0; i < n; i++) {
          if (p === undefined || num(p) === 0) invalid(`the list ends after ${i} of ${n} nodes`);
          seen(num(p));
          const node = deref(p);
          yield typed(mem(node, 'element'));
          p = link(mem(node, 'next'));
        }
      },
    };
  });
})
