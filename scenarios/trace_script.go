package scenarios

// Judging a script call by what it ran: MONITOR prints the commands a
// script runs (source "lua") right after its call, and ScanTrace holds
// the call to them as if they were sent.

import "strconv"

// forbidden is the error at a line whose name no flag can send: the name
// (and a container's subcommand) as the trace has it, quoted.
func forbidden(name string, rec *TraceRecord, why string) *TraceError {
	var buf [maxNameLen]byte
	n := rec.Argv[0]
	if len(rec.Argv) > 1 && len(n) <= maxNameLen/2 && commands[string(upper(buf[:0], n))].container {
		n = append(append(append([]byte(nil), n...), ' '), rec.Argv[1]...)
	}
	return &TraceError{Name: name, Line: rec.Line, Msg: excerpt(n) + " is refused whatever the flags: " + why}
}

// scriptCall is a script call whose effects (the lua lines after it) are
// being read, to judge it by them.
type scriptCall struct {
	line    int64 // 0: none
	name    []byte
	allowed bool // --allow names it: sent whatever the trace shows of it
	effects int64
	// why and hint: the first effect that refuses it ("" none).
	why, hint string
}

// effectPolicy is the policy a script's effects are judged by: p's, but
// for the key prefix's refusals, which are the script's own (see
// WithKeyPrefix).
func effectPolicy(p *Policy) *Policy {
	q := p.clone()
	q.isolate, q.keysFound, q.effects = false, nil, false
	return q
}

// effect judges one command the script ran by the policy, as if it were
// sent (ep: effectPolicy): one the policy refuses, or that --skip leaves
// out, refuses the script. A forbidden name is an error.
func (c *scriptCall) effect(trace string, ep *Policy, rec *TraceRecord) error {
	c.effects++
	if c.why != "" {
		return nil
	}
	a, why := ep.Classify(rec.Argv)
	name := printable(string(AppendCommandName(nil, rec.Argv)))
	at := strconv.FormatInt(rec.Line, 10)
	switch {
	case a == Forbid:
		return &TraceError{Name: trace, Line: c.line, Msg: "the script's command at line " + at + " is refused whatever the flags: " + why}
	case a == Refuse:
		c.why = "its script ran " + name + " at line " + at + ": " + why
		c.hint = "--allow " + name + " sends such scripts, --skip " + string(c.name) + " leaves them out"
	case a == Skip && why == "--skip":
		c.why = "its script ran " + name + " at line " + at + ", which --skip leaves out: a script is sent whole or not at all"
		c.hint = "--skip " + string(c.name) + " leaves such scripts out"
	}
	return nil
}

// verdict is why the script is refused, and what would send it; "" when
// it is not.
func (c *scriptCall) verdict() (why, hint string) {
	switch {
	case c.why != "":
		return c.why, c.hint
	case c.effects == 0 && !c.allowed:
		return "what the script ran is not in the trace: JSON traces, and MONITOR output without its lua lines, do not show it",
			"--allow scripts sends scripts whose effects the trace does not show, --skip " + string(c.name) + " leaves them out"
	}
	return "", ""
}
