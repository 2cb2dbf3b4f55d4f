package usage

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// OptionError is a setting that cannot work as given. Flag names it as the
// command line does ("arrival"), Option as the Go API does ("Arrival"); the
// message is a format whose {name} placeholders (name a command-line
// spelling listed in options) stand for settings. Error renders them as Go
// names; a program with other spellings, such as the command line, renders
// them its own way with Render.
type OptionError struct {
	Option, Flag string
	format       string
	args         []any
	wrapped      []error
}

// Name is a setting named at run time, as an argument of an OptionError's
// format: its command-line spelling, shown as the message's other
// placeholders are.
type Name string

func (n Name) String() string { return options[string(n)] }

// placeholder is a {name} in a format.
var placeholder = regexp.MustCompile(`\{[A-Za-z][a-z0-9-]*\}`)

// Option returns an OptionError about the setting flag (a key of options,
// or "" when the message is about several): format is fmt's, with {name}
// placeholders for settings.
func Option(flag, format string, args ...any) error {
	e := &OptionError{Option: options[flag], Flag: flag, format: format, args: args}
	switch w := fmt.Errorf(format, args...).(type) {
	case interface{ Unwrap() error }:
		e.wrapped = []error{w.Unwrap()}
	case interface{ Unwrap() []error }:
		e.wrapped = w.Unwrap()
	}
	return e
}

// Flagf is Option marked as the user's mistake (Is reports it).
func Flagf(flag, format string, args ...any) error {
	return &Error{Err: Option(flag, format, args...)}
}

func (e *OptionError) Error() string {
	return e.render(func(flag string) string { return options[flag] })
}

// Unwrap returns the errors among the arguments that %w wraps.
func (e *OptionError) Unwrap() []error { return e.wrapped }

func (e *OptionError) render(name func(flag string) string) string {
	format := placeholder.ReplaceAllStringFunc(e.format, func(p string) string {
		flag := p[1 : len(p)-1]
		if _, ok := options[flag]; !ok {
			return p
		}
		return strings.ReplaceAll(name(flag), "%", "%%")
	})
	args := make([]any, len(e.args))
	for i, a := range e.args {
		switch v := a.(type) {
		case Name:
			a = name(string(v))
		case error:
			a = rendered{s: Render(v, name), err: v}
		}
		args[i] = a
	}
	return fmt.Errorf(format, args...).Error()
}

// rendered is an argument error shown with another program's spellings.
type rendered struct {
	s   string
	err error
}

func (r rendered) Error() string { return r.s }
func (r rendered) Unwrap() error { return r.err }

// Render is err's message with the settings of the OptionError it holds
// (and of those in its arguments) spelt by name, given a command-line
// spelling; without an OptionError it is err.Error().
func Render(err error, name func(flag string) string) string {
	s := err.Error()
	var oe *OptionError
	if !errors.As(err, &oe) {
		return s
	}
	return strings.Replace(s, oe.Error(), oe.render(name), 1)
}

// Known reports whether flag is a setting an OptionError's placeholder may
// name ({flag}).
func Known(flag string) bool {
	_, ok := options[flag]
	return ok
}
