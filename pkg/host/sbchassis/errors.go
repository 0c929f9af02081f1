package sbchassis

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Errors a Sync reports; match them with errors.Is.
var (
	// ErrInvalid marks desired input Sync refused before sending anything.
	ErrInvalid = errors.New("invalid remote chassis")
	// ErrForeignChassis marks a desired chassis whose name is held by a row we do not
	// own; see ForeignChassisError.
	ErrForeignChassis = errors.New("chassis name held by a row ovnk-agent does not own")
	// ErrEncapIPInUse marks a desired chassis whose encap IP another chassis keeps
	// for Geneve; see EncapIPInUseError.
	ErrEncapIPInUse = errors.New("encap ip kept by a chassis this sync cannot change")
)

// ForeignChassisError says a desired chassis was skipped because a Chassis row of
// that name exists that is not ours (the local chassis, or one made by hand). The row
// was neither modified nor deleted.
type ForeignChassisError struct {
	// Name is the chassis name.
	Name string
	// UUID is the foreign row's.
	UUID string
	// Holder describes who holds the row.
	Holder string
}

// Error names the chassis, its row and who holds it.
func (e *ForeignChassisError) Error() string {
	return fmt.Sprintf("chassis %q (row %s) is held by %s: left untouched", e.Name, e.UUID, e.Holder)
}

// Is makes errors.Is(err, ErrForeignChassis) true.
func (e *ForeignChassisError) Is(target error) bool { return target == ErrForeignChassis }

// EncapIPInUseError says a desired chassis was skipped because its encap IP is the
// Geneve address of a chassis this Sync cannot change: one we do not own, or one of
// ours that is itself skipped. The Southbound allows one Encap per type and address.
type EncapIPInUseError struct {
	// Chassis is the desired chassis.
	Chassis string
	// IP is its encap address.
	IP string
	// Holder is the name of the chassis that has the address.
	Holder string
}

// Error names the chassis, the address and the chassis that keeps it.
func (e *EncapIPInUseError) Error() string {
	return fmt.Sprintf("chassis %q: geneve encap ip %s is kept by chassis %q, which this sync cannot change: skipped",
		e.Chassis, e.IP, e.Holder)
}

// Is makes errors.Is(err, ErrEncapIPInUse) true.
func (e *EncapIPInUseError) Is(target error) bool { return target == ErrEncapIPInUse }

// validate checks desired and returns it in the form the rows hold, sorted by name.
// It reports every problem at once, each wrapping ErrInvalid.
func validate(desired []RemoteChassis) ([]wanted, error) {
	var errs []error
	bad := func(i int, name, format string, args ...any) {
		errs = append(errs, fmt.Errorf("remote chassis %d (%q): %w: %s", i, name, ErrInvalid, fmt.Sprintf(format, args...)))
	}
	want := make([]wanted, 0, len(desired))
	names := make(map[string]int, len(desired))
	ips := make(map[string]int, len(desired))
	for i, d := range desired {
		ip := d.EncapIP.Unmap()
		switch {
		case strings.TrimSpace(d.Name) == "":
			bad(i, d.Name, "empty name")
		case !ip.IsValid():
			bad(i, d.Name, "no encap ip")
		case ip.IsUnspecified() || ip.IsMulticast():
			bad(i, d.Name, "encap ip %s is not a unicast address", ip)
		case ip.Zone() != "":
			bad(i, d.Name, "encap ip %s has a zone", ip)
		default:
			if j, dup := names[d.Name]; dup {
				bad(i, d.Name, "duplicate name, also chassis %d", j)
				continue
			}
			if j, dup := ips[ip.String()]; dup {
				bad(i, d.Name, "encap ip %s also given to chassis %d (%q)", ip, j, desired[j].Name)
				continue
			}
			names[d.Name], ips[ip.String()] = i, i
			want = append(want, wanted{name: d.Name, hostname: d.Hostname, ip: ip.String()})
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	slices.SortFunc(want, func(a, b wanted) int { return strings.Compare(a.name, b.name) })
	return want, nil
}
