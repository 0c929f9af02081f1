package cluster

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// AnnotationZoneStatus is ovnk's own node annotation (upstream has no such thing): the
// node's agent reports, for every network and every connect (under
// ConnectZoneStatusKey), whether its zone programmed it. The leader
// aggregates the reports of all nodes into each network's NetworkReady condition.
const AnnotationZoneStatus = "ovnk.io/zone-status"

// ZoneStatusCodec reads and writes ovnk.io/zone-status: a JSON object mapping a network
// name to "" when the node's zone programmed the network, or else to the reason it did
// not, e.g. {"cluster_udn_blue":"","ns1_red":"no k8s.ovn.org/l3-gateway-config yet"}.
// Network names must not be empty; a network the object does not name is one the zone
// has not reported on. An empty object reads as nil.
var ZoneStatusCodec = Codec[map[string]string]{Key: AnnotationZoneStatus, parse: parseZoneStatus, format: formatZoneStatus}

// parseZoneStatus reads the report, checking that names are set and reasons strings.
func parseZoneStatus(value string) (map[string]string, error) {
	var raw map[string]json.RawMessage
	if err := decodeJSON(value, &raw, "object"); err != nil {
		return nil, err
	}
	if len(raw) == 0 {
		return nil, nil
	}
	m := make(map[string]string, len(raw))
	for _, name := range slices.Sorted(maps.Keys(raw)) {
		if name == "" {
			return nil, fmt.Errorf("a network name is empty")
		}
		var reason string
		if err := json.Unmarshal(raw[name], &reason); err != nil || string(bytes.TrimSpace(raw[name])) == "null" {
			return nil, fmt.Errorf("network %q: %s is not a JSON string (\"\" when programmed, else the reason)", name, quote(string(raw[name])))
		}
		m[name] = reason
	}
	return m, nil
}

// formatZoneStatus writes the report with sorted keys; nil is the empty object.
func formatZoneStatus(m map[string]string) (string, error) {
	if _, ok := m[""]; ok {
		return "", fmt.Errorf("a network name is empty")
	}
	if m == nil {
		return "{}", nil
	}
	return encodeJSON(m), nil // encoding/json sorts the keys
}

// WaitingNetworks returns, by network name, why Build left out networks that wait for an
// annotation the leader writes (their errors are ErrNotReady), e.g. "waiting for
// k8s.ovn.org/network-id". A zone reports them with that reason: the report names
// every network, the ones it cannot build yet included.
func WaitingNetworks(errs []error) map[string]string {
	out := map[string]string{}
	for _, err := range errs {
		for _, e := range flatten(err) {
			var oe *ObjectError
			if !errors.As(e, &oe) || !errors.Is(e, ErrNotReady) || oe.Annotation == "" {
				continue
			}
			if name := NetworkNameOf(oe.Object); name != "" {
				out[name] = "waiting for " + oe.Annotation
			}
		}
	}
	return out
}

// ZoneReport is one node's ovnk.io/zone-status annotation, read once for every network
// and connect a view shows.
type ZoneReport struct {
	Node string
	// Report is the parsed annotation; Reported is false when the node has none.
	Report   map[string]string
	Reported bool
	// Err says why the annotation could not be read.
	Err error
	// FromZone says the report was not written by an agent but read from the node's
	// zone itself (a cluster whose nodes write no reports); Err then says why the
	// zone could not be read.
	FromZone bool
}

// FromZones reports whether reports were read from the zones themselves rather than
// written by agents.
func FromZones(reports []ZoneReport) bool {
	return slices.ContainsFunc(reports, func(z ZoneReport) bool { return z.FromZone })
}

// AnyReported reports whether any of reports holds a report, readable or not: a
// cluster with none has no ovnk agents writing them.
func AnyReported(reports []ZoneReport) bool {
	for _, z := range reports {
		if z.Reported || z.Err != nil {
			return true
		}
	}
	return false
}

// ReadZoneReports reads every node's report, sorted by node name.
func ReadZoneReports(nodes []corev1.Node) []ZoneReport {
	out := make([]ZoneReport, 0, len(nodes))
	for i := range nodes {
		out = append(out, ReadZoneReport(&nodes[i]))
	}
	slices.SortFunc(out, func(a, b ZoneReport) int { return strings.Compare(a.Node, b.Node) })
	return out
}

// ReadZoneReport reads one node's report.
func ReadZoneReport(node *corev1.Node) ZoneReport {
	report, ok, err := ZoneStatusCodec.Lookup(ObjectRef{Kind: "Node", Name: node.Name}, node.Annotations)
	return ZoneReport{Node: node.Name, Report: report, Reported: ok, Err: err}
}

// NodeReadiness says whether a node's zone programmed something, and why not.
type NodeReadiness struct {
	Node   string
	Ready  bool
	Reason string
}

// Readiness reads the report's entry key (a network name, or ConnectZoneStatusKey);
// what ("network", "connect") names the thing in reasons. The reasons are those of the
// leader's NetworkReady and Ready conditions, which the plugin shows too. An unreadable
// report's reason does not repeat the parse error, which Err keeps: a condition
// message names no annotation value.
func (z ZoneReport) Readiness(key, what string) NodeReadiness {
	r := NodeReadiness{Node: z.Node}
	why, named := z.Report[key]
	switch {
	case z.Err != nil && z.FromZone:
		r.Reason = "its zone was not read: " + z.Err.Error()
	case z.Err != nil:
		r.Reason = fmt.Sprintf("its %s annotation is unreadable", AnnotationZoneStatus)
	case !z.Reported:
		r.Reason = "no zone report yet"
	case !named:
		r.Reason = "the zone has not reported on the " + what + " yet"
	case why != "":
		r.Reason = why
	default:
		r.Ready = true
	}
	return r
}
