// The README demo: a breakpoint, a few registers, a disassembly, a step listener.
print('--- where the program starts');
print(state);

print('--- break at add() and run to it');
breakpoint.set('add', 'add');
print(cont());
print(`rdi=${state.registers.rdi} rsi=${state.registers.rsi} rsp=${hex(state.sp)}`);

print('--- the next instructions');
print(state.disasm(6));

print('--- step through add(): a listener records where each step lands, until ret');
ctx.trace = [];
addEventListener('step', (e) => {
  ctx.trace.push(`${e.symbol}\t${e.state.instruction.text}`);
  if (e.state.instruction.mnemonic === 'ret') return 'stop';
});
print(step(100));
print(ctx.trace.join('\n'));

print('--- log every remaining call without stopping, then let the program finish');
addEventListener('breakpoint', (e) => {
  print(`add(${e.state.registers.rdi}, ${e.state.registers.rsi}) hit ${breakpoint.list()[0].hits}`);
  return 'continue';
});
print(cont());
print('--- the program wrote:');
print(output());
