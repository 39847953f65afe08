thread apply all bt
p accA
