// The prelude, part machine (see base.js): rendering helpers, memory, registers and flags.
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

