package rows

// column is one column of table T that ovnk writes and compares, with typed access to
// its field: no reflection on the reconciler's path.
type column[T any] struct {
	Name string
	// sync copies want's value into cur when the two differ and returns the field's
	// pointer in cur, for an update of exactly that column; nil when they are equal.
	sync func(cur, want *T) any
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
	return compared(name, field, equalSets[V])
}

// mapOf is a map column; nil is the empty map.
func mapOf[T any](name string, field func(*T) *map[string]string) column[T] {
	return compared(name, field, equalMaps)
}

// equalSets compares two set columns as OVSDB does: with no order.
func equalSets[V comparable](a, b []V) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 1 {
		return a[0] == b[0]
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
