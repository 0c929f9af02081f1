package match

import "fmt"

// SyntaxError is why Parse rejected an expression and where.
//
// Col is the 1-based byte column in Input of what is wrong: the first byte of the
// offending token (the unknown field name, the constant that does not fit, the second
// operator of an unparenthesized `&&`/`||` mix), or len(Input)+1 when the input ended
// too early. Msg is lowercase and has no position in it.
type SyntaxError struct {
	Input string
	Col   int
	Msg   string
}

// Error returns the message with its column, e.g. `column 12: invalid IPv4 address "10.0.0.300"`.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("column %d: %s", e.Col, e.Msg)
}

// failure carries a SyntaxError from deep in the recursive-descent parser up to Parse,
// which recovers it; any other panic is a bug and is not recovered.
type failure struct{ err *SyntaxError }

// failf stops parsing with an error at byte offset off of input (0-based).
func failf(input string, off int, format string, args ...any) {
	panic(failure{&SyntaxError{Input: input, Col: off + 1, Msg: fmt.Sprintf(format, args...)}})
}
