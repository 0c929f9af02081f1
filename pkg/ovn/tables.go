package ovn

import (
	"strings"

	"github.com/ovn-kubernetes/libovsdb/model"

	"github.com/ovnk/ovnk/pkg/ovn/rows"
)

// entry is a row with the table it is in (rows.Tables): what the reconciler works on,
// so it never has to find a row's table from its type.
type entry struct {
	m model.Model
	t rows.Table
}

// row is what every managed model offers through its generated getters.
type row interface {
	GetUUID() string
	GetExternalIDs() map[string]string
}

func uuidOf(m model.Model) string { return m.(row).GetUUID() }

func externalIDsOf(m model.Model) map[string]string { return m.(row).GetExternalIDs() }

// identityOf is the row's identity: its external-ID key, or for a desired row its key.
func identityOf(m model.Model) string { return externalIDsOf(m)[rows.IDKey] }

func (e entry) uuid() string     { return uuidOf(e.m) }
func (e entry) identity() string { return identityOf(e.m) }

// refs returns the keys e holds in its reference column ref.
func (e entry) refs(ref int) []string { return *e.t.RefField(e.m, ref) }

// describe names a row for error messages.
func (e entry) describe() string {
	return strings.TrimSpace(e.t.Name() + " " + e.identity())
}
