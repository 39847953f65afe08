// The prelude, part state (see base.js): state and prev.
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

