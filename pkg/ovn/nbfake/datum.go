package nbfake

import (
	"fmt"
	"math"
	"slices"
	"unicode/utf8"

	"github.com/ovn-kubernetes/libovsdb/ovsdb"
)

// A datum is a column's value in the notation libovsdb decodes OVSDB JSON to: an atom
// (string, float64 or int, bool, ovsdb.UUID), an ovsdb.OvsSet or an ovsdb.OvsMap. A set
// of one element may come as that element, as OVSDB allows.

// checkDatum checks a value written to column name as ovsdb-server does when it parses
// one: a value of the wrong kind or size is a syntax error, an atom outside the
// column's enum, range or length a constraint violation.
func checkDatum(name string, col *ovsdb.ColumnSchema, v any) error {
	elems, err := elements(name, col, v)
	if err != nil {
		return err
	}
	if n := len(elems); !sizeFits(col, n) {
		return syntaxError("column %s must have %s members but %d are present", name, sizeRange(col), n)
	}
	return checkElements(name, col, elems)
}

// checkStored checks a value a mutation left in column name, as ovsdb-server does
// after it mutates: a size or an atom the column cannot hold is a constraint violation.
func checkStored(name string, col *ovsdb.ColumnSchema, v any) error {
	elems, err := elements(name, col, v)
	if err != nil {
		return err
	}
	if n := len(elems); !sizeFits(col, n) {
		return constraintViolation("column %s would hold %d values, but it takes %s", name, n, sizeRange(col))
	}
	return checkElements(name, col, elems)
}

// element is one member of a set, or one pair of a map (value is nil for a set).
type element struct {
	key, value any
}

// elements splits a value into its members; a map column takes only a map, any other
// column a set or a single atom.
func elements(name string, col *ovsdb.ColumnSchema, v any) ([]element, error) {
	if col.Type == ovsdb.TypeMap {
		m, ok := v.(ovsdb.OvsMap)
		if !ok {
			return nil, syntaxError("column %s takes a map, not %s", name, describe(v))
		}
		elems := make([]element, 0, len(m.GoMap))
		for k, val := range m.GoMap {
			elems = append(elems, element{k, val})
		}
		return elems, nil
	}
	switch v := v.(type) {
	case ovsdb.OvsMap:
		return nil, syntaxError("column %s takes %s, not a map", name, col.TypeObj.Key.Type)
	case ovsdb.OvsSet:
		elems := make([]element, 0, len(v.GoSet))
		for _, e := range v.GoSet {
			elems = append(elems, element{key: e})
		}
		return elems, nil
	default:
		return []element{{key: v}}, nil
	}
}

// checkElements checks every member's atoms, and that no two members are equal (no
// two keys of a map).
func checkElements(name string, col *ovsdb.ColumnSchema, elems []element) error {
	seen := make(map[any]bool, len(elems))
	for _, e := range elems {
		if err := checkAtom(name, col.TypeObj.Key, e.key); err != nil {
			return err
		}
		if col.Type == ovsdb.TypeMap {
			if err := checkAtom(name, col.TypeObj.Value, e.value); err != nil {
				return err
			}
		}
		k := normalized(e.key)
		if seen[k] {
			return ovsdbError("set contains duplicate: column %s holds %v twice", name, e.key)
		}
		seen[k] = true
	}
	return nil
}

// normalized makes numbers of either decoding compare equal as map keys.
func normalized(a any) any {
	if i, ok := a.(int); ok {
		return float64(i)
	}
	return a
}

// checkAtom checks one atom against a base type: its kind, then its constraints.
func checkAtom(name string, base *ovsdb.BaseType, a any) error {
	if err := checkAtomKind(name, base.Type, a); err != nil {
		return err
	}
	if len(base.Enum) > 0 && !slices.ContainsFunc(base.Enum, func(e any) bool { return normalized(e) == normalized(a) }) {
		return constraintViolation("%v is not one of the allowed values of column %s (%v)", a, name, base.Enum)
	}
	switch base.Type {
	case ovsdb.TypeInteger:
		lo, _ := base.MinInteger()
		hi, _ := base.MaxInteger()
		if n := integerValue(a); n < lo || n > hi {
			return constraintViolation("%d is not in the range %d to %d of column %s", n, lo, hi, name)
		}
	case ovsdb.TypeReal:
		// libovsdb reports an unset minimum as the smallest positive float, which
		// would refuse 0 and every negative number: only a maximum is checked.
		hi, _ := base.MaxReal()
		if r := realValue(a); r > hi {
			return constraintViolation("%v is above the maximum %v of column %s", r, hi, name)
		}
	case ovsdb.TypeString:
		lo, _ := base.MinLength()
		hi, _ := base.MaxLength()
		if n := utf8.RuneCountInString(a.(string)); n < lo || n > hi {
			return constraintViolation("%q is not %d to %d characters long as column %s requires", a, lo, hi, name)
		}
	}
	return nil
}

// checkAtomKind checks that an atom is of the atomic type typ.
func checkAtomKind(name, typ string, a any) error {
	ok := false
	switch typ {
	case ovsdb.TypeInteger:
		switch n := a.(type) {
		case int:
			ok = true
		case float64:
			ok = n == math.Trunc(n) && math.Abs(n) <= 1<<63
		}
	case ovsdb.TypeReal:
		switch a.(type) {
		case int, float64:
			ok = true
		}
	case ovsdb.TypeBoolean:
		_, ok = a.(bool)
	case ovsdb.TypeString:
		_, ok = a.(string)
	case ovsdb.TypeUUID:
		_, ok = a.(ovsdb.UUID)
	}
	if !ok {
		return syntaxError("column %s takes %s atoms, not %s", name, typ, describe(a))
	}
	return nil
}

func integerValue(a any) int {
	if f, ok := a.(float64); ok {
		return int(f)
	}
	return a.(int)
}

func realValue(a any) float64 {
	if i, ok := a.(int); ok {
		return float64(i)
	}
	return a.(float64)
}

// describe names a value's kind for an error.
func describe(v any) string {
	switch v := v.(type) {
	case ovsdb.OvsMap:
		return "a map"
	case ovsdb.OvsSet:
		return "a set"
	case ovsdb.UUID:
		return "a uuid"
	case string:
		return fmt.Sprintf("string %q", v)
	default:
		return fmt.Sprintf("%T %v", v, v)
	}
}

// sizeFits reports whether col may hold n members.
func sizeFits(col *ovsdb.ColumnSchema, n int) bool {
	return n >= col.TypeObj.Min() && (col.TypeObj.Max() == ovsdb.Unlimited || n <= col.TypeObj.Max())
}

func sizeRange(col *ovsdb.ColumnSchema) string {
	if col.TypeObj.Max() == ovsdb.Unlimited {
		return fmt.Sprintf("at least %d", col.TypeObj.Min())
	}
	return fmt.Sprintf("%d to %d", col.TypeObj.Min(), col.TypeObj.Max())
}

// defaultDatum is the value ovsdb-server gives a column an insert leaves out: no
// members when the column may be empty, else the type's default atom (0, "", false,
// the all-zero UUID) — which for a reference is a row that does not exist.
func defaultDatum(col *ovsdb.ColumnSchema) (any, bool) {
	if col.TypeObj.Min() == 0 {
		return nil, false
	}
	key := defaultAtom(col.TypeObj.Key.Type)
	if col.Type == ovsdb.TypeMap {
		return ovsdb.OvsMap{GoMap: map[any]any{key: defaultAtom(col.TypeObj.Value.Type)}}, true
	}
	return key, true
}

func defaultAtom(typ string) any {
	switch typ {
	case ovsdb.TypeInteger:
		return 0
	case ovsdb.TypeReal:
		return 0.0
	case ovsdb.TypeBoolean:
		return false
	case ovsdb.TypeUUID:
		return ovsdb.UUID{GoUUID: "00000000-0000-0000-0000-000000000000"}
	default:
		return ""
	}
}
