set pagination off
break s.rs:15
run
p cstr
p long
p bad_str
