package sbchassis

import (
	"errors"
	"maps"
	"net/netip"
	"slices"
	"strings"

	"github.com/ovnk/ovnk/pkg/ovn/sbdb"
)

// encapOptions are the options of every Encap we write: Geneve with UDP checksums,
// which lets receiving NICs (and the userspace datapath) validate inner packets.
var encapOptions = map[string]string{"csum": "true"}

// wanted is a validated RemoteChassis, its address in the text the Encap row holds.
type wanted struct {
	name, hostname, ip string
}

// change is one of our rows that differs from what is wanted.
type change struct {
	have     sbdb.Chassis
	want     wanted
	hostname bool // the hostname differs
	encap    bool // the Encap must be replaced
}

// plan is what one Sync does: rows to create, fix and delete, and the desired chassis
// it had to leave alone, with why.
type plan struct {
	create []wanted
	update []change
	delete []sbdb.Chassis
	skip   []error
}

// ours reports whether a Chassis row is one a Syncer may write: tagged with our owner
// key and marked remote. A row that lost is-remote has been taken over (ovn-controller
// registering a local chassis of that name) and is no longer ours.
func ours(ch *sbdb.Chassis) bool {
	return ch.ExternalIDs[OwnerKey] == Owner && ch.OtherConfig[IsRemoteKey] == "true"
}

// makePlan compares the wanted chassis, sorted by name, with the Chassis and Encap
// rows the database holds.
func makePlan(want []wanted, chassis []sbdb.Chassis, encaps []sbdb.Encap) *plan {
	byName := make(map[string]*sbdb.Chassis, len(chassis))
	for i := range chassis {
		byName[chassis[i].Name] = &chassis[i]
	}
	encapByUUID := make(map[string]*sbdb.Encap, len(encaps))
	for i := range encaps {
		encapByUUID[encaps[i].UUID] = &encaps[i]
	}
	skip := skips(want, byName, encapByUUID)
	p := &plan{}
	wantedNames := make(map[string]bool, len(want))
	for _, w := range want {
		wantedNames[w.name] = true
		if err := skip[w.name]; err != nil {
			p.skip = append(p.skip, err)
			continue
		}
		have := byName[w.name]
		if have == nil {
			p.create = append(p.create, w)
			continue
		}
		c := change{have: *have, want: w, hostname: have.Hostname != w.hostname, encap: !encapMatches(have, w, encapByUUID)}
		if c.hostname || c.encap {
			p.update = append(p.update, c)
		}
	}
	for i := range chassis {
		if ours(&chassis[i]) && !wantedNames[chassis[i].Name] {
			p.delete = append(p.delete, chassis[i])
		}
	}
	slices.SortFunc(p.delete, func(a, b sbdb.Chassis) int { return strings.Compare(a.Name, b.Name) })
	return p
}

// skips finds the wanted chassis a Sync must leave alone, with why: those whose name
// a row we do not own holds, and those whose address such a row, or one of our rows
// that is itself left alone, keeps. Encap's (type, ip) index makes a Geneve address
// unique in the database; addresses of our other rows are free to move, since the same
// transaction replaces or drops their Encaps.
func skips(want []wanted, byName map[string]*sbdb.Chassis, encapByUUID map[string]*sbdb.Encap) map[string]error {
	held := make(map[string]string) // Geneve address → chassis keeping it
	hold := func(ch *sbdb.Chassis) {
		for _, u := range ch.Encaps {
			if e := encapByUUID[u]; e != nil && e.Type == sbdb.EncapTypeGeneve {
				held[canonicalIP(e.IP)] = ch.Name
			}
		}
	}
	for _, ch := range byName {
		if !ours(ch) {
			hold(ch)
		}
	}
	skip := make(map[string]error)
	for _, w := range want {
		if have := byName[w.name]; have != nil && !ours(have) {
			skip[w.name] = &ForeignChassisError{Name: w.name, UUID: have.UUID, Holder: holder(have)}
		}
	}
	// A skipped row of ours keeps its address, which may be one another wanted chassis
	// asks for: repeat until no more are skipped.
	for again := true; again; {
		again = false
		for _, w := range want {
			h, taken := held[w.ip]
			if skip[w.name] != nil || !taken || h == w.name {
				continue
			}
			skip[w.name] = &EncapIPInUseError{Chassis: w.name, IP: w.ip, Holder: h}
			if have := byName[w.name]; have != nil {
				hold(have)
				again = true
			}
		}
	}
	return skip
}

// encapMatches reports whether a chassis has exactly the one Encap we would give it.
func encapMatches(ch *sbdb.Chassis, w wanted, encapByUUID map[string]*sbdb.Encap) bool {
	if len(ch.Encaps) != 1 {
		return false
	}
	e := encapByUUID[ch.Encaps[0]]
	return e != nil && e.Type == sbdb.EncapTypeGeneve && e.IP == w.ip && e.ChassisName == w.name &&
		maps.Equal(e.Options, encapOptions)
}

// holder describes a Chassis row we do not own, for errors.
func holder(ch *sbdb.Chassis) string {
	switch owner, tagged := ch.ExternalIDs[OwnerKey]; {
	case ch.OtherConfig[IsRemoteKey] != "true":
		return "a local chassis (no other_config:is-remote=true; ovn-controller registers these)"
	case !tagged:
		return "a remote chassis without the " + OwnerKey + " tag (made by hand or by another tool)"
	default:
		return "a remote chassis owned by " + owner
	}
}

// canonicalIP returns the text of an address as validate would write it, so that
// addresses written by others in another form still compare equal.
func canonicalIP(s string) string {
	a, err := netip.ParseAddr(s)
	if err != nil {
		return s
	}
	return a.Unmap().String()
}

// empty reports whether the plan writes nothing.
func (p *plan) empty() bool {
	return len(p.create)+len(p.update)+len(p.delete) == 0
}

// result names what the plan writes, each list sorted.
func (p *plan) result() Result {
	var r Result
	for _, w := range p.create {
		r.Created = append(r.Created, w.name)
	}
	for _, c := range p.update {
		r.Updated = append(r.Updated, c.want.name)
	}
	for _, ch := range p.delete {
		r.Deleted = append(r.Deleted, ch.Name)
	}
	return r
}

// skipped joins the errors of the chassis the plan left alone; nil if none.
func (p *plan) skipped() error { return errors.Join(p.skip...) }
