// scry's printers for libc++ (clang's standard library, `-stdlib=libc++`) as LLVM 14 lays it
// out in its default ABI (namespace std::__1): strings, vector incl. vector<bool>, array,
// deque, lists, the ordered and unordered containers, smart pointers, optional, variant,
// tuple, span, atomic, function. Layouts were learnt from libc++'s headers; every line is
// scry's. Built on the registry of printers.js; called once with the native object.
(function (N) {
  'use strict';
  const { def, seq, run, mem, num, u64, at, deref, invalid, count, walked, typed, valueOffset, templateArgs, functionAt, textOf, contiguous, counted, iterator, MAX_WALK } = N.printerKit;
  // libc++ versions its ABI with an inline namespace (`__1`; `__2` for the next ABI).
  const STD = (name) => new RegExp(`^std::__\\d::${name}<`);
  // The first half of a libc++ `__compressed_pair` (the second is an allocator, a deleter, a
  // comparator or a hasher): its `__compressed_pair_elem<T, 0>` base's `__value_`. By name
  // alone `__value_` is ambiguous when the second is no empty class (a `ByMod{10}` map's
  // comparator, a seeded hash, a function-pointer deleter): both bases then hold one.
  const ELEM0 = /^std::__\d::__compressed_pair_elem<.*, 0, (true|false)>$/;
  const first = (h, ...names) => {
    const pair = mem(h, ...names);
    for (const [name, base] of N.val_bases(pair)) if (ELEM0.test(name)) return mem(base, '__value_');
    return mem(pair, '__value_');
  };

  // Strings: 24 bytes, one of two forms chosen by the low bit of the first byte. Long:
  // capacity|1, size, pointer. Short: size << 1 in the first byte, the characters inline
  // after one code unit. The same bits from LLVM 14 to 17; read from the bytes, so a string
  // type only declared in this unit (clang's -fno-standalone-debug) prints too.
  function stringOf(h) {
    let unit;
    try {
      unit = N.val_param_size(h, 0);
    } catch {
      unit = 1;
    }
    const addr = N.val_addr(h);
    if (addr === undefined) invalid('the string is in no memory');
    const tag = N.val_read(addr, 'u8');
    const long = (tag & 1) === 1;
    const len = count(long ? u64(addr + 8) : tag >> 1, 'length');
    const data = long ? u64(addr + 16) : addr + unit;
    if (!long && len > Math.floor(23 / unit)) invalid(`short length ${len}`);
    const at = (i) => {
      if (i >= len) throw new N.ScryError(`index ${i} is out of bounds (${len} characters)`);
      return typed(N.val_param_at(h, 0, data + i * unit));
    };
    const wide = unit === 4 && N.val_type(N.val_param_at(h, 0, data)) === 'wchar_t';
    return { summary: N.val_literal(data, len, unit, 200, wide), text: () => N.val_chars(data, len, unit), length: len, at };
  }
  def(STD('basic_string'), stringOf);
  def(STD('basic_string_view'), (h) => textOf(h, num(mem(h, '__data')), num(mem(h, '__size'))));

  def(/^std::__\d::vector<bool,/, (h) => {
    const words = num(mem(h, '__begin_'));
    const n = count(num(mem(h, '__size_')), 'length');
    const bit = (i) => {
      const word = N.val_read(words + Math.floor(i / 64) * 8, 'u64');
      return ((BigInt(word) >> BigInt(i % 64)) & 1n) === 1n;
    };
    return { summary: `vector<bool>(${n})`, ...seq(n, bit) };
  });
  def(STD('vector'), (h) => contiguous(h, mem(h, '__begin_'), mem(h, '__end_'), first(h, '__end_cap_'), 'vector'));
  def(STD('array'), (h) => {
    let n = 0;
    let elems;
    try {
      elems = mem(h, '__elems_');
      n = N.val_len(elems) ?? 0;
    } catch {
      // std::array<T, 0> holds no elements member.
    }
    return { summary: `array(${n})`, ...run(elems, n) };
  });
  // A deque: a map of blocks (a split buffer of pointers), the index of the first element
  // and the count; a block holds 4096 bytes of elements (16 elements of 256 bytes or more).
  def(STD('deque'), (h) => {
    const blocks = num(mem(h, '__map_', '__begin_'));
    const blocksEnd = num(mem(h, '__map_', '__end_'));
    const start = count(num(mem(h, '__start_')), 'start');
    const n = count(num(first(h, '__size_')), 'size');
    const size = N.val_param_size(h, 0);
    const per = size < 256 ? Math.floor(4096 / size) : 16;
    if (blocksEnd < blocks || (n > 0 && Math.floor((start + n - 1) / per) >= (blocksEnd - blocks) / 8)) invalid(`${n} elements from ${start} exceed ${(blocksEnd - blocks) / 8} blocks`);
    const item = (i) => {
      const k = start + i;
      return typed(N.val_param_at(h, 0, u64(blocks + Math.floor(k / per) * 8) + (k % per) * size));
    };
    return { summary: `deque(${n})`, ...seq(n, item) };
  });
  // A list: a ring of nodes {prev, next, value} through the end node kept in the list.
  def(STD('list'), (h) => {
    const end = mem(h, '__end_');
    const endAddr = N.val_addr(end);
    const n = count(num(first(h, '__size_alloc_')), 'size');
    const off = valueOffset(h, 0, 16);
    return {
      summary: `list(${n})`,
      length: n,
      elements: function* () {
        const meet = walked();
        let node = num(mem(end, '__next_'));
        for (let i = 0; i < n; i++) {
          if (node === endAddr || node === 0) invalid(`the list ends after ${i} of ${n} nodes`);
          meet(node);
          yield typed(N.val_param_at(h, 0, node + off));
          node = u64(node + 8);
        }
      },
    };
  });
  def(STD('forward_list'), (h) => {
    const head = num(mem(first(h, '__before_begin_'), '__next_'));
    const off = valueOffset(h, 0, 8);
    return {
      summary: 'forward_list',
      elements: function* () {
        const meet = walked();
        for (let node = head, i = 0; node !== 0 && i < MAX_WALK; i++, node = u64(node)) {
          meet(node);
          yield typed(N.val_param_at(h, 0, node + off));
        }
      },
    };
  });

  // A node's value as a container yields it: a map's `__value_type` holds its pair in
  // `__cc`.
  function entryOf(v, isMap) {
    if (!isMap) return typed(v);
    const pair = mem(v, '__cc');
    return [typed(mem(pair, 'first')), typed(mem(pair, 'second'))];
  }

  // The nodes of a red-black tree in order (map, set and their multi forms). A node is
  // {left, right, parent, is_black, value}; the end node, kept in the tree, has only `left`
  // (the root), and the tree keeps its leftmost node.
  function* treeNodes(tree, n) {
    const endNode = N.val_addr(first(tree, '__pair1_'));
    const meet = walked();
    let x = num(mem(tree, '__begin_node_'));
    for (let i = 0; i < n; i++) {
      if (x === endNode || x === 0) invalid(`tree ends after ${i} of ${n} nodes`);
      meet(x);
      yield x;
      const r = u64(x + 8);
      if (r !== 0) {
        x = r;
        for (let l = u64(x), k = 0; l !== 0; l = u64(x), k++) {
          if (k > 64) invalid('tree too deep (a cycle)');
          x = l;
        }
      } else {
        // Climb while x is a right child; its parent is then the successor.
        for (let k = 0; ; k++) {
          if (k > 64) invalid('tree too deep (a cycle)');
          const parent = u64(x + 16);
          if (u64(parent) === x) {
            x = parent;
            break;
          }
          x = parent;
        }
      }
    }
  }
  def(/^std::__\d::(multi)?(map|set)</, (h, name) => {
    const tree = mem(h, '__tree_');
    const n = count(num(first(tree, '__pair3_')), 'size');
    const kind = name.slice(name.indexOf('::', 5) + 2, name.indexOf('<'));
    const isMap = kind.endsWith('map');
    return {
      summary: `${kind}(${n})`,
      length: n,
      ordered: true,
      [isMap ? 'entries' : 'elements']: function* () {
        // The node's links end at byte 25 and, the node base being no POD, the Itanium ABI
        // puts the value in its tail padding: at 28 for an int, 32 for a string.
        const off = valueOffset(tree, 0, 25);
        for (const node of treeNodes(tree, n)) {
          yield entryOf(N.val_param_at(tree, 0, node + off), isMap);
        }
      },
    };
  });
  // Hash tables: a singly linked list of nodes {next, hash, value} from the first node kept
  // in the table.
  def(/^std::__\d::unordered_(multi)?(map|set)</, (h, name) => {
    const table = mem(h, '__table_');
    const n = count(num(first(table, '__p2_')), 'size');
    const kind = name.slice(name.indexOf('::', 5) + 2, name.indexOf('<'));
    const isMap = kind.endsWith('map');
    return {
      summary: `${kind}(${n})`,
      length: n,
      [isMap ? 'entries' : 'elements']: function* () {
        const off = valueOffset(table, 0, 16);
        const meet = walked();
        let node = num(mem(first(table, '__p1_'), '__next_'));
        for (let i = 0; i < n; i++) {
          if (node === 0) invalid(`list ends after ${i} of ${n} elements`);
          meet(node);
          yield entryOf(N.val_param_at(table, 0, node + off), isMap);
          node = u64(node);
        }
      },
    };
  });

  // Shared pointers: the object and a control block {vtable, owners - 1, weak owners - 1};
  // the owners together hold one weak count, which is not a weak_ptr.
  function sharedOf(h, kind) {
    const ptr = mem(h, '__ptr_');
    const ctrl = num(mem(h, '__cntrl_'));
    if (ctrl === 0) return num(ptr) === 0 ? { summary: `${kind}(null)`, empty: true, null: true } : { summary: `${kind}(no count)`, pointee: () => typed(deref(ptr)) };
    const use = Number(N.val_read(ctrl + 8, 'i64')) + 1;
    return counted(kind, use, Number(N.val_read(ctrl + 16, 'i64')) + 1 - (use > 0 ? 1 : 0), ptr);
  }
  def(STD('shared_ptr'), (h) => sharedOf(h, 'shared_ptr'));
  def(STD('weak_ptr'), (h) => sharedOf(h, 'weak_ptr'));
  def(STD('unique_ptr'), (h, name) => {
    const ptr = first(h, '__ptr_');
    if (num(ptr) === 0) return { summary: 'unique_ptr(null)', empty: true, null: true };
    // unique_ptr<T[]> owns an array whose length it does not keep: its pointer, indexable.
    if (/unique_ptr<[^<>]*\[\]/.test(name)) return { summary: 'unique_ptr<[]>', value: () => typed(ptr), at: (i) => typed(at(ptr, i)) };
    return { summary: 'unique_ptr', pointee: () => typed(deref(ptr)) };
  });
  def(STD('optional'), (h) => {
    if (!N.val_prim(mem(h, '__engaged_'), 'number', true)) return { summary: 'nullopt', empty: true };
    return { summary: 'optional', value: () => typed(mem(h, '__val_')) };
  });
  // A variant: a recursive union (`__head` holds alternative 0, `__tail` the rest) and the
  // index of the alternative held, all ones for none.
  def(STD('variant'), (h) => {
    const impl = mem(h, '__impl');
    const indexH = mem(impl, '__index');
    const index = num(indexH);
    const npos = 2 ** (8 * N.val_size(indexH)) - 1;
    if (index === npos) return { summary: 'variant(valueless)', empty: true };
    let u = mem(impl, '__data');
    for (let i = 0; i < index; i++) u = mem(u, '__tail');
    return { summary: `variant[${index}]`, value: () => typed(mem(u, '__head', '__value')) };
  });
  // A tuple: one leaf base per element (`__tuple_leaf<i, T>` holding `__value_`; an empty T
  // is the leaf itself).
  def(STD('tuple'), (h) => {
    const leaves = [];
    try {
      for (const [name, leaf] of N.val_bases(mem(h, '__base_'))) if (name.includes('__tuple_leaf<')) leaves.push(leaf);
    } catch {
      // std::tuple<> holds nothing.
    }
    const item = (i) => {
      const leaf = leaves[i];
      return typed(N.val_keys(leaf).includes('__value_') ? mem(leaf, '__value_') : leaf);
    };
    return { summary: `tuple(${leaves.length})`, ...seq(leaves.length, item) };
  });
  // A span: the pointer, and the count kept in it (dynamic extent) or the type's last
  // template argument.
  def(STD('span'), (h, name) => {
    const data = mem(h, '__data');
    const n = count(N.val_keys(h).includes('__size') ? num(mem(h, '__size')) : staticExtent(name), 'length');
    return { summary: `span(${n})`, ...run(data, n) };
  });
  def(STD('atomic'), (h) => ({ summary: 'atomic', value: () => typed(mem(h, '__a_', '__a_value')) }));
  // A function holds a pointer to its callable's wrapper (a class with a vtable), null when
  // empty; the vtable's symbol names the callable's type (`__func<main::$_0, ...>`); a
  // function pointer is kept after the wrapper's vtable and named by its symbol.
  def(STD('function'), (h) => {
    const f = num(mem(h, '__f_', '__f_'));
    if (f === 0) return { summary: 'function(empty)', empty: true };
    const vtable = u64(f);
    const sym = N.symbol_peek(vtable);
    const functor = typeof sym === 'string' ? templateArgs(sym, '__func<')[0] : undefined;
    if (functor === undefined) return { summary: `function -> 0x${vtable.toString(16)}` };
    if (!functor.includes('(*)')) return { summary: `function -> ${functor}` };
    const target = u64(f + 8);
    return { summary: `function -> ${functionAt(target) ?? '0x' + target.toString(16)}` };
  });

  // The extent of a fixed-size span, its type's last template argument.
  function staticExtent(name) {
    const m = /, (\d+)U?L?>$/.exec(name);
    if (!m) invalid(`no extent in ${name}`);
    return Number(m[1]);
  }
  // Iterators print as what they refer to (`iterator -> 12`); `*it` reads it; see the
  // libstdc++ ones. A map's and a hash map's wrap the tree's or table's own iterator.
  const pointing = (h, ...fields) => {
    const keys = N.val_keys(h);
    const p = mem(h, fields.find((f) => keys.includes(f)) ?? fields[0]);
    return iterator(num(p), () => typed(deref(p)));
  };
  def(/^std::__\d::__wrap_iter</, (h) => pointing(h, '__i_', '__i'));
  def(/^std::__\d::__deque_iterator</, (h) => pointing(h, '__ptr_'));
  // A map's value_type keeps the pair in `__cc`.
  const unwrapped = (v) => {
    const keys = N.val_keys(v);
    return keys.length === 1 && keys[0] === '__cc' ? mem(v, '__cc') : v;
  };
  const treeIterator = (h) => {
    const node = num(mem(h, '__ptr_'));
    return iterator(node, () => typed(unwrapped(N.val_param_at(h, 0, node + valueOffset(h, 0, 25)))));
  };
  def(/^std::__\d::__tree_(const_)?iterator</, treeIterator);
  def(/^std::__\d::__map_(const_)?iterator</, (h) => treeIterator(mem(h, '__i_')));
  def(/^std::__\d::__list_(const_)?iterator</, (h) => {
    const node = num(mem(h, '__ptr_'));
    return iterator(node, () => typed(N.val_param_at(h, 0, node + valueOffset(h, 0, 16))));
  });
  // A hash iterator points at the node's base, whose template argument is the node pointer
  // type: the field read as that type leads to the node, which holds `__value_`.
  const hashIterator = (h) => {
    const field = mem(h, '__node_');
    return iterator(num(field), () => {
      const node = N.val_param_at(deref(field), 0, N.val_addr(field));
      return typed(unwrapped(mem(deref(node), '__value_')));
    });
  };
  def(/^std::__\d::__hash_(const_)?iterator</, hashIterator);
  def(/^std::__\d::__hash_map_(const_)?iterator</, (h) => hashIterator(mem(h, '__i_')));
})
