package match

import (
	"errors"
	"fmt"
)

// SyntaxError is why Parse rejected an expression and where.
//
// Col is the 1-based byte column in Input of what is wrong: the first byte of the
// offending token (the unknown field name, the constant that does not fit, the second
// operator of an unparenthesized `&&`/`||` mix), or len(Input)+1 when the input ended
// too early. Msg is lowercase and has no position in it.
//
// Unsupported tells the two kinds of rejection apart. When it is false OVN rejects the
// expression too, so a row written with it never applies in OVN either. When it is
// true OVN accepts the expression and this package cannot evaluate it (a field a
// simulated Packet does not carry, such as vlan.tci): whoever simulates the row cannot
// tell whether OVN applies it. errors.Is(err, ErrUnsupported) tests for it.
type SyntaxError struct {
	Input       string
	Col         int
	Msg         string
	Unsupported bool
}

// ErrUnsupported matches, with errors.Is, the SyntaxError of an expression OVN accepts
// and this package cannot evaluate.
var ErrUnsupported = errors.New("match: valid in OVN, not supported here")

// Error returns the message with its column, e.g. `column 12: invalid IPv4 address "10.0.0.300"`.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("column %d: %s", e.Col, e.Msg)
}

// Is reports whether target is ErrUnsupported and the expression is one OVN accepts.
func (e *SyntaxError) Is(target error) bool { return target == ErrUnsupported && e.Unsupported }

// failure carries a SyntaxError from deep in the recursive-descent parser up to Parse,
// which recovers it; any other panic is a bug and is not recovered.
type failure struct{ err *SyntaxError }

// failf stops parsing with an error at byte offset off of input (0-based): the
// expression is one OVN rejects too.
func failf(input string, off int, format string, args ...any) {
	panic(failure{&SyntaxError{Input: input, Col: off + 1, Msg: fmt.Sprintf(format, args...)}})
}

// unsupportedf stops parsing at byte offset off of input: OVN accepts what is there,
// and this package cannot evaluate it.
func unsupportedf(input string, off int, format string, args ...any) {
	panic(failure{&SyntaxError{Input: input, Col: off + 1, Msg: fmt.Sprintf(format, args...), Unsupported: true}})
}
