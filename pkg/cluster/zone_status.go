package cluster

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
)

// AnnotationZoneStatus is ovnk's own node annotation (upstream has no such thing): the
// node's agent reports, for every network, whether its zone programmed it. The leader
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
