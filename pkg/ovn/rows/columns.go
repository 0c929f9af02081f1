package rows

// column is one column of table T that ovnk writes and compares, with typed access to
// its field: no reflection on the reconciler's path.
type column[T any] struct {
	Name string
	// sync copies want's value into cur when the two differ and returns the field's
	// pointer in cur, for an update of exactly that column; nil when they are equal.
	sync func(cur, want *T) any
	// same reports whether cur and want hold equal values, without copying anything.
	same func(cur, want *T) bool
	// value is the field's value, for printers.
	value func(*T) any
}

// compared is the column whose field is field, its values equal when equal says so.
func compared[T, V any](name string, field func(*T) *V, equal func(a, b V) bool) column[T] {
	return column[T]{Name: name,
		sync: func(cur, want *T) any {
			c, w := field(cur), field(want)
			if equal(*c, *w) {
				return nil
			}
			*c = *w
			return c
		},
		same:  func(cur, want *T) bool { return equal(*field(cur), *field(want)) },
		value: func(r *T) any { return *field(r) },
	}
}

// scalar is a column of one required value: a string, an integer, a boolean, an enum.
func scalar[T any, V comparable](name string, field func(*T) *V) column[T] {
	return compared(name, field, func(a, b V) bool { return a == b })
}

// optional is a column of zero or one value, a pointer in the model; nil is empty.
func optional[T any, V comparable](name string, field func(*T) **V) column[T] {
	return compared(name, field, func(a, b *V) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b })
}

// setOf is a set column: order does not count, and nil is the empty set.
func setOf[T any, V comparable](name string, field func(*T) *[]V) column[T] {
	return compared(name, field, SameSet[V])
}

// mapOf is a map column; nil is the empty map.
func mapOf[T any](name string, field func(*T) *map[string]string) column[T] {
	return compared(name, field, equalMaps)
}

// SameSet compares two sets (a set column, a reference column) as OVSDB does: with
// no order. Small sets, nearly all of them, are compared without allocating: the
// reconciler compares every row it cannot pass over.
func SameSet[V comparable](a, b []V) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) <= 8 {
		for _, v := range a {
			if count(a, v) != count(b, v) {
				return false
			}
		}
		return true
	}
	seen := make(map[V]int, len(a))
	for _, v := range a {
		seen[v]++
	}
	for _, v := range b {
		if seen[v] == 0 {
			return false
		}
		seen[v]--
	}
	return true
}

func count[V comparable](s []V, v V) int {
	n := 0
	for _, x := range s {
		if x == v {
			n++
		}
	}
	return n
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// RefColumn is a reference column through which ovnk's rows hang together: a parent's
// set of its children, or (Weak) of rows planned under another parent.
type RefColumn struct {
	// Name is the column; Table the table its rows are in.
	Name, Table string
	// Weak: the rows belong to another parent (a port group lists switch ports, which
	// their switches own); only the reference is this row's.
	Weak bool
}

// ref is a RefColumn of table T, with typed access to its field.
type ref[T any] struct {
	RefColumn
	field func(*T) *[]string
}

// children is a reference column whose rows belong to this row: ovnk adds and removes
// its own rows' references in it, and leaves others'.
func children[T any](name, table string, field func(*T) *[]string) ref[T] {
	return ref[T]{RefColumn{Name: name, Table: table}, field}
}

// weak is a reference column naming rows another parent owns.
func weak[T any](name, table string, field func(*T) *[]string) ref[T] {
	return ref[T]{RefColumn{Name: name, Table: table, Weak: true}, field}
}
