package tracecmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"

	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/pkg/trace"
)

// SnapshotVersion names the format of a --save file. Fields are only added within a
// version; a change that is not backwards compatible gets a new version.
const SnapshotVersion = "ovnk.trace-snapshot/v1"

// snapshot is everything one trace used, as --save writes it and --from-file replays
// it: the request, the cluster around it, and the zones the simulator read — each
// node's dump, or the error reading it gave.
type snapshot struct {
	SchemaVersion string               `json:"schemaVersion"`
	Request       savedRequest         `json:"request"`
	Chassis       map[string]string    `json:"chassis"`
	Pods          []savedPort          `json:"pods"`
	Zones         map[string]*ovn.Dump `json:"zones"`
	ZoneErrors    map[string]string    `json:"zoneErrors,omitempty"`
}

// savedRequest is SRC and DST as typed and the trace.Request they resolved to.
type savedRequest struct {
	Src     string     `json:"src"`
	Dst     string     `json:"dst"`
	Node    string     `json:"node"`
	Port    string     `json:"port"`
	SrcIP   netip.Addr `json:"srcIP"`
	DstIP   netip.Addr `json:"dstIP"`
	Proto   string     `json:"proto"`
	DstPort uint16     `json:"dstPort,omitzero"`
	Reply   bool       `json:"reply"`
}

// savedPort is a trace.PodPort with the file's field names; the two convert into each
// other, so a field added to one and not the other does not compile.
type savedPort struct {
	Pod     string       `json:"pod"`
	Node    string       `json:"node"`
	Network string       `json:"network"`
	NAD     string       `json:"nad,omitempty"`
	Port    string       `json:"port"`
	IPs     []netip.Addr `json:"ips"`
	Primary bool         `json:"primary,omitempty"`
}

// newSnapshot records a trace: the request for src and dst, the inventory's chassis
// and ports, and what the zone cache read.
func newSnapshot(src, dst endpoint, req trace.Request, inv *inventory, zones *zoneCache) *snapshot {
	s := &snapshot{
		SchemaVersion: SnapshotVersion,
		Request: savedRequest{Src: src.arg, Dst: dst.arg, Node: req.Node, Port: req.Port, SrcIP: req.Src, DstIP: req.Dst,
			Proto: string(req.Proto), DstPort: req.DstPort, Reply: req.Reply},
		Chassis: inv.chassis,
		Pods:    make([]savedPort, len(inv.ports)),
	}
	for i, p := range inv.ports {
		s.Pods[i] = savedPort(p)
	}
	s.Zones, s.ZoneErrors = zones.used()
	return s
}

// write saves the snapshot to path.
func (s *snapshot) write(path string) error {
	data, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("encode the trace for --save: %w", err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("--save: %w", err)
	}
	return nil
}

// readSnapshot reads a --save file, refusing one of another format.
func readSnapshot(path string) (*snapshot, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--from-file: %w", err)
	}
	var s snapshot
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("--from-file %s is not a saved trace: %w", path, err)
	}
	if s.SchemaVersion != SnapshotVersion {
		return nil, fmt.Errorf("--from-file %s is of format %q, not %q: replay it with the kubectl ovnk release that saved it", path, s.SchemaVersion, SnapshotVersion)
	}
	return &s, nil
}

// request is the saved trace.Request.
func (s *snapshot) request() trace.Request {
	r := s.Request
	return trace.Request{Node: r.Node, Port: r.Port, Src: r.SrcIP, Dst: r.DstIP, Proto: trace.Proto(r.Proto), DstPort: r.DstPort, Reply: r.Reply}
}

// ports are the saved pod ports.
func (s *snapshot) ports() []trace.PodPort {
	out := make([]trace.PodPort, len(s.Pods))
	for i, p := range s.Pods {
		out[i] = trace.PodPort(p)
	}
	return out
}

// Dump gives a node's saved zone, so a replay reads zones as the trace did: the same
// dumps, and the same errors where there were errors.
func (s *snapshot) Dump(_ context.Context, node string) (*ovn.Dump, error) {
	if d, ok := s.Zones[node]; ok {
		return d, nil
	}
	if msg, ok := s.ZoneErrors[node]; ok {
		return nil, errors.New(msg)
	}
	return nil, fmt.Errorf("the saved trace holds no zone of node %s", node)
}
