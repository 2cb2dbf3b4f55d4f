// Package usage marks errors that are the user's: a flag, a file or a
// command line that cannot work as given. Packages below cmd/ return them;
// the CLI prints their one line and exits 2. An OptionError names the
// settings it speaks of as Go does (Arrival); the CLI spells them as flags
// (--arrival), so no package below cmd/ writes a flag's name.
package usage

import (
	"errors"
	"fmt"
)

// Error is a mistake in what the user asked for.
type Error struct{ Err error }

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Errorf formats a usage error.
func Errorf(format string, args ...any) error {
	return &Error{Err: fmt.Errorf(format, args...)}
}

// Is reports whether err is, or wraps, a usage error.
func Is(err error) bool {
	var e *Error
	return errors.As(err, &e)
}
