package nbfake

import (
	"fmt"

	"github.com/ovn-kubernetes/libovsdb/ovsdb"
)

// Error kinds an operation result carries, as ovsdb-server names them. libovsdb has
// types for the kinds of RFC 7047 only; "syntax error" and "ovsdb error" are
// ovsdb-server's.
const (
	kindSyntax        = "syntax error"
	kindConstraint    = "constraint violation"
	kindOVSDB         = "ovsdb error"
	kindNotSupported  = "not supported"
	kindDuplicateUUID = "duplicate uuid"
	kindAborted       = "aborted"
	kindNotOwner      = "not owner"
)

// opError is why an operation fails, in the form of an OVSDB operation result.
type opError struct {
	kind, details string
}

func (e *opError) Error() string { return e.kind + ": " + e.details }

func (e *opError) result() *ovsdb.OperationResult {
	return &ovsdb.OperationResult{Error: e.kind, Details: e.details}
}

func syntaxError(format string, args ...any) *opError {
	return &opError{kindSyntax, fmt.Sprintf(format, args...)}
}

func constraintViolation(format string, args ...any) *opError {
	return &opError{kindConstraint, fmt.Sprintf(format, args...)}
}

func ovsdbError(format string, args ...any) *opError {
	return &opError{kindOVSDB, fmt.Sprintf(format, args...)}
}

func notSupported(format string, args ...any) *opError {
	return &opError{kindNotSupported, fmt.Sprintf(format, args...)}
}
