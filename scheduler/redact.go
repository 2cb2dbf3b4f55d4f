package scheduler

// Redact applies redact to the server text r carries (the first error and
// the error codes, per test and per command), before it is rendered or
// written: a server may echo AUTH's argument in its error replies. Codes
// that become the same text are added together.
func (r *Result) Redact(redact func(string) string) {
	if r == nil {
		return
	}
	r.FirstError = redact(r.FirstError)
	r.ErrorCodes = redactCodes(r.ErrorCodes, redact)
	for i := range r.Commands {
		r.Commands[i].ErrorCodes = redactCodes(r.Commands[i].ErrorCodes, redact)
	}
}

func redactCodes(codes map[string]uint64, redact func(string) string) map[string]uint64 {
	if codes == nil {
		return nil
	}
	out := make(map[string]uint64, len(codes))
	for k, v := range codes {
		out[redact(k)] += v
	}
	return out
}
