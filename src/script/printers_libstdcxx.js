// scry's printers for libstdc++ as g++ 12 lays it out: strings, vector, array, deque, lists,
// the ordered and unordered containers, smart pointers, optional, variant, tuple, span,
// atomic, function, the container adapters and bitset.
// Layouts were learnt from gdb's libstdc++ printers; every line is scry's. Built on the
// registry of printers.js; called once with the native object.
(function (N) {
  'use strict';
  const { def, seq, run, mem, num, numExact, u64, at, deref, base, invalid, count, walked, typed, valueOffset, templateArgs, functionAt, textOf, contiguous, counted, iterator, MAX_WALK } = N.printerKit;
  const ScryError = N.ScryError;
  // ---- libstdc++ --------------------------------------------------------------------------
  // `std::__cxx1998::` holds the plain containers that -D_GLIBCXX_DEBUG's wrap.
  const STD = (name) => new RegExp(`^std::(__cxx1998::)?(__cxx11::)?${name}<`);

  def(STD('basic_string'), (h) => textOf(h, num(mem(h, '_M_dataplus', '_M_p')), numExact(mem(h, '_M_string_length'))));
  def(/^std::basic_string_view</, (h) => textOf(h, num(mem(h, '_M_str')), numExact(mem(h, '_M_len'))));

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
      return ((BigInt(word) >> BigInt(k % 64)) & 1n) === 1n;
    };
    return { summary: `vector<bool>(${n})`, ...seq(n, bit) };
  });
  def(STD('vector'), (h) => {
    const impl = mem(h, '_M_impl');
    return contiguous(h, mem(impl, '_M_start'), mem(impl, '_M_finish'), mem(impl, '_M_end_of_storage'), 'vector');
  });
  def(/^std::array</, (h) => {
    const elems = mem(h, '_M_elems');
    const n = N.val_len(elems) ?? 0;
    return { summary: `array(${n})`, ...run(elems, n) };
  });
  // stack, queue, priority_queue: the container they adapt (`c`), in its order (a
  // priority_queue's is its heap's), as gdb shows them.
  for (const kind of ['stack', 'queue', 'priority_queue']) {
    def(STD(kind), (h) => {
      const inner = N.printedOf(mem(h, 'c'));
      if (!inner) invalid('the adapted container has no printer');
      const n = inner.length();
      return { summary: `${kind}(${n})`, length: n, elements: () => inner.iterate(), at: (i) => inner.at(i) };
    });
  }
  // bitset<N>: its bits, bit 0 first, as flags (`bitset<10>(10) [true, false, ...]`).
  def(STD('bitset'), (h, name) => {
    const m = /^std::(?:__\w+::)?bitset<(\d+)/.exec(name);
    if (!m) invalid(`no size in ${name}`);
    const n = count(Number(m[1]), 'size');
    const words = N.val_addr(mem(h, '_M_w'));
    if (words === undefined) invalid('the bits are in no memory');
    const bit = (i) => {
      if (i >= n) throw new ScryError(`index ${i} is out of bounds (${n} bits)`);
      const word = N.val_read(words + Math.floor(i / 64) * 8, 'u64');
      return ((BigInt(word) >> BigInt(i % 64)) & 1n) === 1n;
    };
    return { summary: `bitset<${n}>`, ...seq(n, bit) };
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
    const n = count(numExact(mem(head, '_M_size')), 'size');
    const off = valueOffset(h, 0, 16);
    return {
      summary: `list(${n})`,
      length: n,
      elements: function* () {
        const meet = walked();
        let node = u64(headAddr);
        for (let i = 0; i < n; i++) {
          if (node === headAddr || node === 0) invalid(`the list ends after ${i} of ${n} nodes`);
          meet(node);
          yield typed(N.val_param_at(h, 0, node + off));
          node = u64(node);
        }
      },
    };
  });
  def(/^std::forward_list</, (h) => {
    const first = num(mem(h, '_M_impl', '_M_head', '_M_next'));
    const off = valueOffset(h, 0, 8);
    return {
      summary: 'forward_list',
      elements: function* () {
        const meet = walked();
        for (let node = first, i = 0; node !== 0 && i < MAX_WALK; i++, node = u64(node)) {
          meet(node);
          yield typed(N.val_param_at(h, 0, node + off));
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
  // A node's value follows its colour and three links (32 bytes), at the value's alignment.
  const treeValue = (tree, off, node) => N.val_param_at(tree, 1, node + off);
  def(/^std::(__debug::)?(multi)?map</, (h, name) => {
    const tree = mem(h, '_M_t');
    const n = count(numExact(mem(tree, '_M_impl', '_M_node_count')), 'size');
    const kind = name.startsWith('std::multimap') ? 'multimap' : 'map';
    return {
      summary: `${kind}(${n})`,
      length: n,
      ordered: true,
      entries: function* () {
        const off = valueOffset(tree, 1, 32);
        for (const node of treeNodes(tree)) {
          const v = treeValue(tree, off, node);
          yield [typed(mem(v, 'first')), typed(mem(v, 'second'))];
        }
      },
    };
  });
  def(/^std::(__debug::)?(multi)?set</, (h, name) => {
    const tree = mem(h, '_M_t');
    const n = count(numExact(mem(tree, '_M_impl', '_M_node_count')), 'size');
    const kind = name.startsWith('std::multiset') ? 'multiset' : 'set';
    return {
      summary: `${kind}(${n})`,
      length: n,
      elements: function* () {
        const off = valueOffset(tree, 1, 32);
        for (const node of treeNodes(tree)) yield typed(treeValue(tree, off, node));
      },
    };
  });
  // Hash tables: a singly linked list of nodes from _M_before_begin; a node's value follows
  // its next pointer, at the value's alignment.
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
    const kind = name.slice(name.lastIndexOf('::', name.indexOf('<')) + 2, name.indexOf('<'));
    const isMap = kind.endsWith('map');
    return {
      summary: `${kind}(${n})`,
      length: n,
      [isMap ? 'entries' : 'elements']: function* () {
        const off = valueOffset(table, 1, 8);
        for (const node of hashNodes(table, n)) {
          const v = N.val_param_at(table, 1, node + off);
          yield isMap ? [typed(mem(v, 'first')), typed(mem(v, 'second'))] : typed(v);
        }
      },
    };
  });
  // The control block counts owners at +8 and weak references (plus one for the owners
  // together) at +12.
  function sharedOf(h, kind) {
    const ptr = mem(h, '_M_ptr');
    const pi = num(mem(h, '_M_refcount', '_M_pi'));
    if (pi === 0) return num(ptr) === 0 ? { summary: `${kind}(null)`, empty: true, null: true } : { summary: `${kind}(no count)`, pointee: () => typed(deref(ptr)) };
    const use = N.val_read(pi + 8, 'i32');
    return counted(kind, use, N.val_read(pi + 12, 'i32') - (use > 0 ? 1 : 0), ptr);
  }
  def(/^std::shared_ptr</, (h, name) => {
    const r = sharedOf(h, 'shared_ptr');
    // shared_ptr<T[]> owns an array whose length it does not keep: its pointer, indexable,
    // as unique_ptr<T[]> (its first element is not the pointee).
    if (!/^std::shared_ptr<[^<>]*\[\d*\]/.test(name) || r.pointee === undefined || typeof r.pointee !== 'function') return r;
    const ptr = mem(h, '_M_ptr');
    return { summary: r.summary.replace('shared_ptr', 'shared_ptr<[]>'), value: () => typed(ptr), at: (i) => typed(at(ptr, i)) };
  });
  def(/^std::weak_ptr</, (h) => sharedOf(h, 'weak_ptr'));
  def(/^std::unique_ptr</, (h, name) => {
    const tuple = mem(h, '_M_t', '_M_t');
    const head = base(tuple, 'std::_Head_base<0,');
    if (head === undefined) invalid('no pointer in the tuple');
    const ptr = mem(head, '_M_head_impl');
    if (num(ptr) === 0) return { summary: 'unique_ptr(null)', empty: true, null: true };
    // unique_ptr<T[]> owns an array whose length it does not keep: its pointer, indexable.
    if (/^std::unique_ptr<[^<>]*\[\]/.test(name)) return { summary: 'unique_ptr<[]>', value: () => typed(ptr), at: (i) => typed(at(ptr, i)) };
    return { summary: 'unique_ptr', pointee: () => typed(deref(ptr)) };
  });
  def(/^std::optional</, (h) => {
    const payload = mem(h, '_M_payload');
    if (!N.val_prim(mem(payload, '_M_engaged'), 'number', true)) return { summary: 'nullopt', empty: true };
    return { summary: 'optional', value: () => typed(mem(payload, '_M_payload', '_M_value')) };
  });
  def(/^std::variant</, (h) => {
    const index = num(mem(h, '_M_index'));
    if (index === 255 || index === 65535) return { summary: 'variant(valueless)', empty: true };
    let u = mem(h, '_M_u');
    for (let i = 0; i < index; i++) u = mem(u, '_M_rest');
    const first = mem(u, '_M_first');
    const storage = mem(first, '_M_storage');
    // A type with a destructor is kept as raw bytes: read it as the alternative's type.
    const v = N.val_type(storage).startsWith('__gnu_cxx::__aligned_membuf') ? N.val_param_at(first, 0, N.val_addr(storage)) : storage;
    return { summary: `variant[${index}]`, value: () => typed(v) };
  });
  // atomic<T> keeps its value in `_M_i` (integers, bool, structs), `_M_fp` (floating point,
  // through __atomic_float), `_M_base._M_i` (older integral layouts) or `_M_b._M_p`
  // (pointers).
  def(/^std::atomic</, (h) => {
    const paths = [['_M_i'], ['_M_fp'], ['_M_base', '_M_i'], ['_M_b', '_M_p']];
    for (const path of paths) {
      let v;
      try {
        v = mem(h, ...path);
      } catch {
        continue;
      }
      return { summary: 'atomic', value: () => typed(v) };
    }
    invalid(`no value member in ${N.val_type(h)} (members: ${N.val_keys(h).join(' ')})`);
  });
  // A tuple: a chain of bases, element i in the one named `_Head_base<i, ...>`.
  def(/^std::tuple</, (h) => {
    const heads = [];
    for (let i = 0; i < 64; i++) {
      const head = base(h, `std::_Head_base<${i},`);
      if (head === undefined) break;
      heads.push(head);
    }
    return { summary: `tuple(${heads.length})`, ...seq(heads.length, (i) => typed(mem(heads[i], '_M_head_impl'))) };
  });
  // A span: the pointer, and the count kept in it (dynamic extent, the type's last argument
  // all ones) or the type's last argument itself.
  def(/^std::span</, (h, name) => {
    const ptr = mem(h, '_M_ptr');
    const last = /, (\d+)U?L?>$/.exec(name);
    const fixed = last && last[1] !== '18446744073709551615' ? Number(last[1]) : undefined;
    const n = count(fixed ?? num(mem(h, '_M_extent', '_M_extent_value')), 'length');
    return { summary: `span(${n})`, ...run(ptr, n) };
  });
  // An initializer_list: a pointer to its elements and their count.
  def(/^std::initializer_list</, (h) => {
    const n = count(num(mem(h, '_M_len')), 'length');
    return { summary: `initializer_list(${n})`, ...run(mem(h, '_M_array'), n) };
  });
  // A filesystem::path is its text (`_M_pathname`); the components are derived from it.
  def(/^std::filesystem::(__cxx11::)?path$/, (h) => ({ summary: 'path', value: () => typed(mem(h, '_M_pathname')) }));
  // An any names what it holds by its manager, `std::any::_Manager_internal<int>::_S_manage`
  // (the value in the any's own storage) or `_Manager_external<T>` (in the heap, at
  // `_M_storage._M_ptr`).
  def(/^std::any$/, (h) => {
    const manager = num(mem(h, '_M_manager'));
    if (manager === 0) return { summary: 'any(empty)', empty: true };
    const sym = N.symbol_peek(manager);
    const m = typeof sym === 'string' ? /_Manager_(internal|external)<(.*)>::_S_manage/.exec(sym) : null;
    if (!m) return { summary: `any -> 0x${manager.toString(16)}` };
    const storage = mem(h, '_M_storage');
    const addr = m[1] === 'internal' ? N.val_addr(storage) : num(mem(storage, '_M_ptr'));
    let v;
    try {
      v = N.typed_at(addr, m[2]);
    } catch (e) {
      return { summary: `any(${m[2]}) <${e.message}>` };
    }
    return { summary: 'any', value: () => typed(v) };
  });
  // A function names its callable by the handler its invoker belongs to,
  // `_Function_handler<int (int), main::{lambda(int)#1}>`; a function pointer is kept in the
  // function itself and named by the symbol it points at.
  def(/^std::function</, (h) => {
    if (num(mem(h, '_M_manager')) === 0) return { summary: 'function(empty)', empty: true };
    const invoker = num(mem(h, '_M_invoker'));
    const handler = N.symbol_peek(invoker);
    const functor = typeof handler === 'string' ? templateArgs(handler, '_Function_handler<')[1] : undefined;
    if (functor === undefined) return { summary: `function -> 0x${invoker.toString(16)}` };
    if (!functor.includes('(*)')) return { summary: `function -> ${functor}` };
    const target = num(mem(h, '_M_functor', '_M_unused', '_M_function_pointer'));
    return { summary: `function -> ${functionAt(target) ?? '0x' + target.toString(16)}` };
  });

  // -D_GLIBCXX_DEBUG: std::__debug::vector (list, deque, forward_list) is checked bookkeeping
  // around the plain container, its base std::__cxx1998::vector: printed as that.
  // The printed form of `h`'s first base whose type name starts with one of `prefixes`.
  const asBase = (h, prefixes, what) => {
    for (const prefix of prefixes) {
      const plain = base(h, prefix);
      const inner = plain === undefined ? null : N.printedOf(plain);
      if (inner) return inner.r;
    }
    invalid(`no ${what} in it`);
  };
  def(/^std::__debug::(vector|list|deque|forward_list)</, (h, name) => {
    const kind = /^std::__debug::(\w+)</.exec(name)[1];
    return asBase(h, [`std::__cxx1998::${kind}<`, `std::__cxx1998::__cxx11::${kind}<`], `std::__cxx1998::${kind}`);
  });

  // Iterators print as what they refer to, as gdb's printers show them (`iterator -> 12`,
  // `iterator -> {first: "nuts", second: 8}`); `*it` reads it (the kit's `iterator`).
  // A vector's or string's iterator is a pointer: `it[i]` is the element i further on (was
  // the i-th part of `*it`, a character of the string it points at).
  def(/^__gnu_cxx::__normal_iterator</, (h) => {
    const cur = mem(h, '_M_current');
    const r = iterator(num(cur), () => typed(deref(cur)));
    return r.empty ? r : { ...r, at: (i) => typed(at(cur, i)) };
  });
  def(/^std::_Deque_iterator</, (h) => {
    const cur = mem(h, '_M_cur');
    return iterator(num(cur), () => typed(deref(cur)));
  });
  // -D_GLIBCXX_DEBUG's checked iterators wrap the plain one, a base (through the
  // _Safe_iterator of each iterator category): printed as it.
  const PLAIN_ITERATORS = ['__gnu_cxx::__normal_iterator<', 'std::_Deque_iterator<', 'std::_List_iterator<', 'std::_List_const_iterator<', 'std::_Fwd_list_iterator<', 'std::_Fwd_list_const_iterator<', 'std::_Rb_tree_iterator<', 'std::_Rb_tree_const_iterator<', 'std::__detail::_Node_iterator<', 'std::__detail::_Node_const_iterator<'];
  def(/^__gnu_debug::_Safe_(local_)?iterator</, (h) => asBase(h, PLAIN_ITERATORS, 'plain iterator'));
  // Node iterators: the value follows the node's links (a list's two, a forward_list's one,
  // a tree's colour and three, a hash node's next pointer), at the value's alignment.
  const nodeIterator = (field, links) => (h) => {
    const node = num(mem(h, field));
    return iterator(node, () => typed(N.val_param_at(h, 0, node + valueOffset(h, 0, links))));
  };
  def(/^std::_List_(const_)?iterator</, nodeIterator('_M_node', 16));
  def(/^std::_Fwd_list_(const_)?iterator</, nodeIterator('_M_node', 8));
  def(/^std::_Rb_tree_(const_)?iterator</, nodeIterator('_M_node', 32));
  def(/^std::__detail::_Node_(const_)?iterator</, nodeIterator('_M_cur', 8));
})
