package networkcmd

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// origins remembers which flag produced each field of the object create builds, so
// that a validation error about a field can name the flag and the value typed.
type origins []origin

// origin is one field and the flag (and values) it came from. An empty flag is the
// NAME argument.
type origin struct {
	path   string
	flag   string
	values []string
}

func (o *origins) add(path *field.Path, flag string, values ...string) {
	*o = append(*o, origin{path: path.String(), flag: flag, values: values})
}

// explain turns a field error into one line: "--flag value: what is wrong (and the
// fix)". It uses the origin of the longest path that contains the field.
func (o origins) explain(e *field.Error) error {
	detail := e.Detail
	if detail == "" {
		detail = e.ErrorBody()
	}
	var best *origin
	for i := range o {
		c := &o[i]
		if contains(c.path, e.Field) && (best == nil || len(c.path) > len(best.path)) {
			best = c
		}
	}
	switch {
	case best == nil:
		return fmt.Errorf("invalid network: %s: %s", e.Field, detail)
	case best.flag == "":
		return fmt.Errorf("network name %q: %s", strings.Join(best.values, ","), detail)
	case len(best.values) == 0:
		return fmt.Errorf("%s: %s", best.flag, detail)
	}
	return fmt.Errorf("%s %s: %s", best.flag, strings.Join(best.values, ","), detail)
}

// contains reports whether path is field or one of its parents.
func contains(path, field string) bool {
	return field == path || strings.HasPrefix(field, path+".") || strings.HasPrefix(field, path+"[")
}
