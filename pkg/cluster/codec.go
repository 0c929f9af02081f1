package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"reflect"
	"strconv"
	"strings"
)

// Codec reads and writes one OVN-Kubernetes annotation whose value has type T.
// Parse validates everything ovnk uses and ignores JSON fields it does not know;
// Format writes the canonical form, which Parse reads back to an equal value.
type Codec[T any] struct {
	// Key is the annotation's name, e.g. "k8s.ovn.org/node-subnets".
	Key    string
	parse  func(string) (T, error)
	format func(T) (string, error)
}

// Parse decodes value, the annotation's value on obj. The error is an *ObjectError
// naming obj, the annotation, the offending value and what is wrong with it.
func (c Codec[T]) Parse(obj ObjectRef, value string) (T, error) {
	v, err := c.parse(value)
	if err != nil {
		var zero T
		return zero, &ObjectError{Object: obj, Annotation: c.Key, Err: err}
	}
	return v, nil
}

// Lookup parses the annotation from annotations, the annotations of obj. ok is false
// (with a nil error) when the annotation is not set.
func (c Codec[T]) Lookup(obj ObjectRef, annotations map[string]string) (v T, ok bool, err error) {
	value, ok := annotations[c.Key]
	if !ok {
		return v, false, nil
	}
	v, err = c.Parse(obj, value)
	return v, true, err
}

// Format encodes v in the canonical form. It fails when v could not be parsed back,
// e.g. an invalid prefix or two addresses of one family where one is allowed.
func (c Codec[T]) Format(v T) (string, error) {
	s, err := c.format(v)
	if err != nil {
		return "", fmt.Errorf("formatting annotation %s: %w", c.Key, err)
	}
	return s, nil
}

// ObjectError is a problem with one Kubernetes object, such as a malformed annotation
// or a reference to a network that does not exist. Build returns one per object (or per
// pod-networks entry) and carries on with the others.
type ObjectError struct {
	// Object is the object at fault.
	Object ObjectRef
	// Annotation is the annotation at fault; empty when the problem is elsewhere.
	Annotation string
	// Err says what is wrong.
	Err error
}

// Error names the object in kubectl style (node/worker1, pod/ns/name), then the
// annotation if any, then the problem.
func (e *ObjectError) Error() string {
	obj := objectName(e.Object)
	if e.Annotation == "" {
		return fmt.Sprintf("%s: %v", obj, e.Err)
	}
	return fmt.Sprintf("%s: annotation %s: %v", obj, e.Annotation, e.Err)
}

// objectName names an object in messages, kubectl-style: kind/namespace/name, with the
// kind in lower case.
func objectName(ref ObjectRef) string {
	return strings.ToLower(ref.Kind) + strings.TrimPrefix(ref.String(), ref.Kind)
}

// Unwrap returns the underlying error.
func (e *ObjectError) Unwrap() error { return e.Err }

// maxQuoted bounds how much of a malformed value an error message repeats.
const maxQuoted = 200

// quote quotes s for an error message, shortened to maxQuoted bytes.
func quote(s string) string {
	if len(s) > maxQuoted {
		return strconv.Quote(s[:maxQuoted]) + "…"
	}
	return strconv.Quote(s)
}

// decodeJSON unmarshals value into v (a pointer), rejecting a top-level null, and
// turns encoding/json's errors into messages without Go type names.
func decodeJSON(value string, v any, want string) error {
	if strings.TrimSpace(value) == "null" {
		return fmt.Errorf("value null is not a JSON %s", want)
	}
	err := json.Unmarshal([]byte(value), v)
	if err == nil {
		return nil
	}
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		where := "the value"
		if typeErr.Field != "" {
			where = fmt.Sprintf("field %q", typeErr.Field)
		}
		return fmt.Errorf("%s of %s is a JSON %s, want %s", where, quote(value), typeErr.Value, jsonKind(typeErr.Type))
	}
	return fmt.Errorf("malformed JSON %s, want a JSON %s: %w", quote(value), want, err)
}

// jsonKind names the JSON type that decodes into a Go type.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Slice, reflect.Array:
		return "array of " + jsonKind(t.Elem()) + "s"
	case reflect.Map, reflect.Struct:
		return "object"
	case reflect.Bool:
		return "boolean"
	default:
		return t.Kind().String()
	}
}

// encodeJSON marshals v. Every value ovnk encodes is made of strings, numbers, slices
// and maps, which cannot fail to encode.
func encodeJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("cluster: encoding %T: %v", v, err))
	}
	return string(b)
}

// parseID parses a non-negative decimal id such as a node or network id.
func parseID(s string) (int, error) {
	id, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%s is not a decimal integer", quote(s))
	}
	if id < 0 {
		return 0, fmt.Errorf("%s is negative; ids start at 0", quote(s))
	}
	return id, nil
}

func formatID(id int) (string, error) {
	if id < 0 {
		return "", fmt.Errorf("id %d is negative", id)
	}
	return strconv.Itoa(id), nil
}

// parseSubnet parses a CIDR naming a whole subnet: no host bits may be set.
func parseSubnet(s string) (netip.Prefix, error) {
	p, err := parseIfAddr(s)
	if err != nil {
		return p, err
	}
	if p != p.Masked() {
		return p, fmt.Errorf("%s has host bits set; the subnet is %s", quote(s), p.Masked())
	}
	return p, nil
}

// parseIfAddr parses an interface address in CIDR notation, e.g. 100.88.0.4/16.
func parseIfAddr(s string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return p, fmt.Errorf("%s is not a CIDR such as 10.244.1.0/24 or fd00:10:244:1::/64", quote(s))
	}
	return p, nil
}

// parseAddr parses an IP address without a prefix length or zone.
func parseAddr(s string) (netip.Addr, error) {
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return netip.Addr{}, fmt.Errorf("%s is not an IP address such as 10.244.1.1 or fd00::1", quote(s))
	}
	return a, nil
}

// parseMAC parses a 48-bit MAC address and returns it in canonical form
// (lower case, colon-separated).
func parseMAC(s string) (string, error) {
	hw, err := net.ParseMAC(s)
	if err != nil {
		return "", fmt.Errorf("%s is not a MAC address such as 0a:58:0a:f4:01:05", quote(s))
	}
	if len(hw) != 6 {
		return "", fmt.Errorf("MAC address %s has %d bits, want 48", quote(s), 8*len(hw))
	}
	return hw.String(), nil
}

// family names the IP family of an address.
func family(a netip.Addr) string {
	if a.Is4() {
		return "IPv4"
	}
	return "IPv6"
}

// onePerFamily checks that prefixes are valid and hold at most one per IP family.
func onePerFamily(what string, prefixes []netip.Prefix) error {
	seen := map[bool]netip.Prefix{}
	for _, p := range prefixes {
		if !p.IsValid() {
			return fmt.Errorf("%s: invalid prefix %q", what, p)
		}
		if prev, dup := seen[p.Addr().Is4()]; dup {
			return fmt.Errorf("%s: %s and %s are both %s; at most one per IP family", what, prev, p, family(p.Addr()))
		}
		seen[p.Addr().Is4()] = p
	}
	return nil
}

// prefixStrings formats prefixes, or returns nil for none.
func prefixStrings(prefixes []netip.Prefix) []string {
	if len(prefixes) == 0 {
		return nil
	}
	out := make([]string, len(prefixes))
	for i, p := range prefixes {
		out[i] = p.String()
	}
	return out
}
